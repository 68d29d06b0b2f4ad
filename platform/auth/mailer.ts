import type { StackConfig } from "../config.ts";

/** One message the auth service sends (GoTrue's mailer templates, reduced to what a developer reads). */
export interface AuthMail {
  to: string;
  subject: string;
  html: string;
}

/** The sender GoTrue's local setup uses (`[auth.email.smtp]` absent: the CLI's admin address). */
const SENDER = "Supabase Auth <admin@email.com>";

/**
 * Delivers a message to the stack's mail catcher (its Resend-compatible endpoint), which plays the
 * part Mailpit plays for `supabase start`. Throws when the catcher refuses or is unreachable, so the
 * caller can fail the request the way GoTrue does when SMTP fails.
 */
export async function sendAuthMail(config: StackConfig, mail: AuthMail): Promise<void> {
  const response = await fetch(`http://127.0.0.1:${config.ports.mail}/emails`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer orbita-auth" },
    body: JSON.stringify({ from: SENDER, to: [mail.to], subject: mail.subject, html: mail.html }),
  });
  if (!response.ok) throw new Error(`mail catcher answered ${response.status}`);
}
