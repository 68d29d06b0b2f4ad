import { ResendHttpError } from "./errors.ts";
import type { EmailBody, OutgoingEmail } from "./schemas.ts";

/**
 * Turns a send body into what the store keeps: every attachment as bytes, with a file name and a
 * type. Resend fetches `path` attachments itself, so the catcher does too (refusing with Resend's
 * 422 when it can not), and the stored message is what the recipient would have received.
 */
export async function materialise(body: EmailBody): Promise<OutgoingEmail> {
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
