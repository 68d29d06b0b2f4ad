import { Hono } from "hono";
import { ResendHttpError, zodToResendError } from "./errors.ts";
import { inboxPage } from "./page.ts";
import { json } from "./responses.ts";
import { MESSAGE_ID } from "./routes-resend.ts";
import { listQuerySchema } from "./schemas.ts";
import type { MailStore } from "./store.ts";

/** The inbox for people and tests: the HTML page at `/` and the JSON API under `/api/messages`. */
export function inboxRoutes(store: MailStore): Hono {
  const app = new Hono();
  app.get("/", () => new Response(inboxPage(), { headers: { "content-type": "text/html; charset=utf-8" } }));
  app.get("/api/messages", async (c) => {
    const input = Object.fromEntries(new URL(c.req.url).searchParams);
    const query = listQuerySchema.safeParse(input);
    if (!query.success) throw zodToResendError(query.error, input);
    return json(await store.list(query.data));
  });
  app.delete("/api/messages", async () => json({ deleted: await store.clear() }));
  app.get(`/api/messages/${MESSAGE_ID}`, async (c) => {
    const message = await store.get(c.req.param("id"));
    if (!message) throw new ResendHttpError(404, "not_found", "Message not found");
    return json(message);
  });
  app.delete(`/api/messages/${MESSAGE_ID}`, async (c) => {
    if (!(await store.remove(c.req.param("id")))) throw new ResendHttpError(404, "not_found", "Message not found");
    return json({ deleted: 1 });
  });
  app.get(`/api/messages/${MESSAGE_ID}/html`, async (c) => {
    const message = await store.get(c.req.param("id"));
    if (!message) throw new ResendHttpError(404, "not_found", "Message not found");
    // Caught HTML is untrusted: no scripts, no network, shown only inside a sandboxed frame.
    return new Response(message.html ?? "", {
      headers: {
        "content-type": "text/html; charset=utf-8",
        "content-security-policy": "default-src 'none'; img-src data:; style-src 'unsafe-inline'; sandbox",
      },
    });
  });
  app.get(`/api/messages/${MESSAGE_ID}/attachments/:index{\\d+}`, async (c) => {
    const found = await store.attachment(c.req.param("id"), Number(c.req.param("index")));
    if (!found) throw new ResendHttpError(404, "not_found", "Attachment not found");
    return new Response(new Uint8Array(found.bytes), {
      headers: {
        "content-type": found.meta.content_type,
        "content-length": String(found.bytes.byteLength),
        "content-disposition": `attachment; filename="${found.meta.filename.replace(/["\\\r\n]/g, "_")}"`,
      },
    });
  });
  return app;
}
