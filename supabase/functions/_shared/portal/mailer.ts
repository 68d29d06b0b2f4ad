import { Resend } from "resend";
import { readEnv } from "../config/env.ts";

/** The sender when PORTAL_EMAIL_FROM is unset (use a domain verified in Resend in production). */
export const DEFAULT_FROM = "Orbita Propostas <propostas@orbita.local>";

/** One portal e-mail, in the shape the `resend` client sends. */
export interface PortalEmail {
  to: string[];
  subject: string;
  html: string;
  text: string;
  attachments?: { filename: string; content: Uint8Array; contentType: string }[];
  tags?: { name: string; value: string }[];
  /** The sender, when not the portal's (PORTAL_EMAIL_FROM): workflow approvals send as the workflow service. */
  from?: string;
}

/** What sending gave: Resend's message id, or why it failed. */
export type SendResult = { ok: true; id: string } | { ok: false; message: string };

/**
 * Sends a portal e-mail through Resend, the one path every portal message takes: RESEND_API_KEY,
 * RESEND_BASE_URL (set locally to the mail catcher) and PORTAL_EMAIL_FROM are read here only.
 * Never throws: a refusal, an unreachable service or no answer within `timeoutMs` is a failed
 * result, so each caller decides what a failure means for its request.
 */
export async function sendPortalEmail(email: PortalEmail, timeoutMs = 10_000): Promise<SendResult> {
  const resend = new Resend(readEnv("RESEND_API_KEY") || "re_local_development", { baseUrl: readEnv("RESEND_BASE_URL") || undefined });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<SendResult>((resolve) => {
    timer = setTimeout(() => resolve({ ok: false, message: `no answer within ${timeoutMs} ms` }), timeoutMs);
  });
  const send = (async (): Promise<SendResult> => {
    try {
      const { data, error } = await resend.emails.send({ ...email, from: email.from ?? (readEnv("PORTAL_EMAIL_FROM") || DEFAULT_FROM) });
      if (error || !data) return { ok: false, message: error?.message ?? "no answer" };
      return { ok: true, id: data.id };
    } catch (error) {
      return { ok: false, message: error instanceof Error ? error.message : String(error) };
    }
  })();
  try {
    return await Promise.race([send, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
