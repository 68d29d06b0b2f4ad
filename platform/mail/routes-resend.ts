import { Hono } from "hono";
import { materialise } from "./attachments.ts";
import { ResendHttpError, zodToResendError } from "./errors.ts";
import { json } from "./responses.ts";
import { batchBodySchema, emailBodySchema } from "./schemas.ts";
import type { MailStore } from "./store.ts";

/** A message id as the store makes them (a UUID); anything else is no route, as before. */
export const MESSAGE_ID = ":id{[0-9a-f-]{36}}";

/**
 * Resend's sending API (`POST /emails`, `POST /emails/batch`, `GET /emails/:id`), so the real
 * `resend` client pointed here with RESEND_BASE_URL "sends" into the store.
 */
export function resendRoutes(store: MailStore): Hono {
  const app = new Hono();
  app.post("/emails", async (c) => {
    requireApiKey(c.req.raw);
    const input = await readJson(c.req.raw);
    const body = emailBodySchema.safeParse(input);
    if (!body.success) throw zodToResendError(body.error, input);
    return json({ id: await store.save(await materialise(body.data)) });
  });
  app.post("/emails/batch", async (c) => {
    requireApiKey(c.req.raw);
    const input = await readJson(c.req.raw);
    const body = batchBodySchema.safeParse(input);
    if (!body.success) throw zodToResendError(body.error, input);
    const data: { id: string }[] = [];
    for (const email of body.data) data.push({ id: await store.save(await materialise(email)) });
    return json({ data });
  });
  app.get(`/emails/${MESSAGE_ID}`, async (c) => {
    requireApiKey(c.req.raw);
    const message = await store.get(c.req.param("id"));
    if (!message) throw new ResendHttpError(404, "not_found", "Email not found");
    return json({
      object: "email",
      id: message.id,
      to: message.to,
      from: message.from,
      created_at: message.created_at,
      subject: message.subject,
      html: message.html,
      text: message.text,
      cc: message.cc,
      bcc: message.bcc,
      reply_to: message.reply_to,
      last_event: "delivered",
    });
  });
  return app;
}

/** Resend rejects requests without a bearer key; any key is accepted locally. */
function requireApiKey(request: Request): void {
  const header = request.headers.get("authorization") ?? "";
  if (!/^Bearer\s+\S+/i.test(header)) {
    throw new ResendHttpError(
      401,
      "missing_api_key",
      "Missing API key in the authorization header. Include the following header in the request: Authorization: Bearer YOUR_API_KEY",
    );
  }
}

async function readJson(request: Request): Promise<unknown> {
  try {
    return await request.json();
  } catch {
    throw new ResendHttpError(422, "validation_error", "The request body is not valid JSON.");
  }
}
