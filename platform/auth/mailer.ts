import type { AuthContext } from "./context.ts";
import { internalError } from "./errors.ts";
import { composeMail, type TemplateData } from "./mail-templates.ts";
import type { TemplateType } from "./settings.ts";

/** The sender GoTrue's local setup uses (`[auth.email.smtp]` absent: the CLI's admin address). */
const SENDER = "Supabase Auth <admin@email.com>";

/**
 * Delivers one of GoTrue's mails to the stack's mail catcher (its Resend-compatible endpoint),
 * which plays the part Mailpit plays for `supabase start`. A catcher that refuses or cannot be
 * reached fails the request with `failureMessage`, as GoTrue fails when SMTP does.
 */
export async function sendAuthMail(context: AuthContext, type: TemplateType, to: string, data: TemplateData, failureMessage: string): Promise<void> {
  let response: Response;
  try {
    const { subject, html } = composeMail(context.settings, type, data);
    response = await fetch(`http://127.0.0.1:${context.config.ports.mail}/emails`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer orbita-auth" },
      body: JSON.stringify({ from: SENDER, to: [to], subject, html }),
    });
  } catch (error) {
    throw internalError(failureMessage, error);
  }
  if (!response.ok) throw internalError(failureMessage, new Error(`mail catcher answered ${response.status}`));
}

/**
 * The link a mail carries: /verify on the auth service with the token hash, the type and where to
 * go afterwards (GoTrue's MAILER_URLPATHS, which the CLI points at `<auth>/verify`). A redirect
 * holding `&`, `=` or `#` is escaped; otherwise it is written as given, as GoTrue writes it.
 */
export function actionLink(context: AuthContext, tokenHashValue: string, type: string, redirectTo: string): string {
  const redirect = /[&=#]/.test(redirectTo) ? encodeURIComponent(redirectTo) : redirectTo;
  return `${context.config.jwtIssuer}/verify?token=${encodeURIComponent(tokenHashValue)}&type=${encodeURIComponent(type)}&redirect_to=${redirect}`;
}
