/**
 * The one-time code of an e-mail chat, sent through Resend (locally RESEND_BASE_URL points the
 * real client at the mail catcher, as the portal's e-mails do). CHAT_EMAIL_FROM sets the sender.
 */
import { Resend } from "resend";
import { readEnv } from "../../../config/env.ts";
import { HttpError } from "../../../http/errors.ts";
import { escapeHtml } from "../../../http/html.ts";

const DEFAULT_FROM = "Orbita Chat <chat@orbita.local>";

/** What the message says. */
export interface ChatCode {
  email: string;
  code: string;
  title: string;
  expiresAt: string;
}

/** The e-mail's subject, text and HTML. */
export function chatCodeEmail({ code, title }: ChatCode): { subject: string; text: string; html: string } {
  const text = `Your code to sign in to "${title}" is ${code}.\n\nIt works for 15 minutes. If you did not ask for it, ignore this e-mail.`;
  const html = `<p>Your code to sign in to <strong>${escapeHtml(title)}</strong> is</p><p style="font-size:28px;letter-spacing:4px"><strong>${code}</strong></p><p>It works for 15 minutes. If you did not ask for it, ignore this e-mail.</p>`;
  return { subject: `${code} is your code for ${title}`, text, html };
}

/** Sends the code; 502 EMAIL_FAILED when the mail service refuses it. */
export async function sendChatCode(message: ChatCode): Promise<void> {
  const resend = new Resend(readEnv("RESEND_API_KEY") || "re_local_development", { baseUrl: readEnv("RESEND_BASE_URL") || undefined });
  const email = chatCodeEmail(message);
  const { data, error } = await resend.emails.send({ from: readEnv("CHAT_EMAIL_FROM") || DEFAULT_FROM, to: [message.email], ...email });
  if (error || !data) throw new HttpError(502, "EMAIL_FAILED", `The code could not be sent: ${error?.message ?? "no answer from the mail service"}`);
}
