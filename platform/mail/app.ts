import { mkdir } from "node:fs/promises";
import type { StackConfig } from "../config/stack-config.ts";
import type { PlatformService } from "../http/platform-service.ts";
import { MailStore } from "./store.ts";
import { batchBodySchema, emailBodySchema, listQuerySchema, type EmailBody, type OutgoingEmail } from "./schemas.ts";
import { inboxPage } from "./page.ts";
import { resendError, ResendHttpError, zodToResendError } from "./errors.ts";

/**
 * The local mail catcher: a Resend-compatible `POST /emails` (and `/emails/batch`) so the real
 * `resend` client pointed at it with `RESEND_BASE_URL` "sends" into a folder, plus a small JSON API
 * and an HTML inbox to read what was caught. Nothing ever leaves the machine.
 */
export function createMailService(config: StackConfig): PlatformService {
  const store = new MailStore(config.mailDir);
  const ready = mkdir(config.mailDir, { recursive: true });

  async function handle(request: Request): Promise<Response> {
    await ready;
    const url = new URL(request.url);
    const path = url.pathname.replace(/\/+$/, "") || "/";
    const method = request.method.toUpperCase();

    if (path === "/" && method === "GET") {
      return new Response(inboxPage(), { headers: { "content-type": "text/html; charset=utf-8" } });
    }

    // Resend-compatible sending API.
    if (path === "/emails" && method === "POST") {
      requireApiKey(request);
      const input = await readJson(request);
      const body = emailBodySchema.safeParse(input);
      if (!body.success) throw zodToResendError(body.error, input);
      const id = await store.save(await materialise(body.data));
      return json({ id });
    }
    if (path === "/emails/batch" && method === "POST") {
      requireApiKey(request);
      const input = await readJson(request);
      const body = batchBodySchema.safeParse(input);
      if (!body.success) throw zodToResendError(body.error, input);
      const data: { id: string }[] = [];
      for (const email of body.data) data.push({ id: await store.save(await materialise(email)) });
      return json({ data });
    }
    const resendGet = /^\/emails\/([0-9a-f-]{36})$/.exec(path);
    if (resendGet && method === "GET") {
      requireApiKey(request);
      const message = await store.get(resendGet[1]);
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
    }

    // Inbox API for people and tests.
    if (path === "/api/messages" && method === "GET") {
      const input = Object.fromEntries(url.searchParams);
      const query = listQuerySchema.safeParse(input);
      if (!query.success) throw zodToResendError(query.error, input);
      return json(await store.list(query.data));
    }
    if (path === "/api/messages" && method === "DELETE") {
      return json({ deleted: await store.clear() });
    }
    const one = /^\/api\/messages\/([0-9a-f-]{36})$/.exec(path);
    if (one && method === "GET") {
      const message = await store.get(one[1]);
      if (!message) throw new ResendHttpError(404, "not_found", "Message not found");
      return json(message);
    }
    if (one && method === "DELETE") {
      if (!(await store.remove(one[1]))) throw new ResendHttpError(404, "not_found", "Message not found");
      return json({ deleted: 1 });
    }
    const html = /^\/api\/messages\/([0-9a-f-]{36})\/html$/.exec(path);
    if (html && method === "GET") {
      const message = await store.get(html[1]);
      if (!message) throw new ResendHttpError(404, "not_found", "Message not found");
      // Caught HTML is untrusted: no scripts, no network, shown only inside a sandboxed frame.
      return new Response(message.html ?? "", {
        headers: {
          "content-type": "text/html; charset=utf-8",
          "content-security-policy": "default-src 'none'; img-src data:; style-src 'unsafe-inline'; sandbox",
        },
      });
    }
    const attachment = /^\/api\/messages\/([0-9a-f-]{36})\/attachments\/(\d+)$/.exec(path);
    if (attachment && method === "GET") {
      const found = await store.attachment(attachment[1], Number(attachment[2]));
      if (!found) throw new ResendHttpError(404, "not_found", "Attachment not found");
      return new Response(new Uint8Array(found.bytes), {
        headers: {
          "content-type": found.meta.content_type,
          "content-length": String(found.bytes.byteLength),
          "content-disposition": `attachment; filename="${found.meta.filename.replace(/["\\\r\n]/g, "_")}"`,
        },
      });
    }
    throw new ResendHttpError(404, "not_found", `No route for ${method} ${path}`);
  }

  return {
    async fetch(request) {
      try {
        return await handle(request);
      } catch (error) {
        if (error instanceof ResendHttpError) return resendError(error);
        return resendError(new ResendHttpError(500, "application_error", error instanceof Error ? error.message : String(error)));
      }
    },
    async close() {},
  };
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

async function materialise(body: EmailBody): Promise<OutgoingEmail> {
  const attachments: OutgoingEmail["attachments"] = [];
  for (const [index, item] of (body.attachments ?? []).entries()) {
    let bytes: Buffer;
    let remoteType: string | null = null;
    if (item.content !== undefined) {
      bytes = Buffer.from(item.content, "base64");
    } else {
      const response = await fetch(item.path!, { signal: AbortSignal.timeout(10_000) }).catch(() => null);
      if (!response?.ok) throw new ResendHttpError(422, "validation_error", `Could not fetch attachment ${index} from its path.`);
      bytes = Buffer.from(await response.arrayBuffer());
      remoteType = response.headers.get("content-type");
    }
    const filename = item.filename ?? (item.path ? decodeURIComponent(new URL(item.path).pathname.split("/").pop() || "") : "") ?? "";
    attachments.push({
      filename: filename || `attachment-${index}`,
      content_type: item.content_type ?? remoteType ?? guessType(filename),
      content_id: item.content_id,
      bytes,
    });
  }
  return { body, attachments };
}

const TYPES: Record<string, string> = {
  pdf: "application/pdf",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  txt: "text/plain",
  csv: "text/csv",
  html: "text/html",
  json: "application/json",
  zip: "application/zip",
};

function guessType(filename: string): string {
  const extension = filename.split(".").pop()?.toLowerCase() ?? "";
  return TYPES[extension] ?? "application/octet-stream";
}

function json(value: unknown, status = 200): Response {
  return new Response(JSON.stringify(value), { status, headers: { "content-type": "application/json" } });
}
