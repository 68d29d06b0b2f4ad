import type { Context } from "hono";
import { html } from "hono/html";
import { layout, type Markup } from "./layout.ts";

/** What a destructive action will take away, for the page that asks before doing it. */
export interface Confirmation {
  /** The page's title, a question ("Delete this row of public.cidades?"). */
  title: string;
  /** What will be lost, named so the person can tell it is the right thing. */
  lost: Markup;
  /** The button that goes ahead, naming the action ("Delete row"). */
  button: string;
  /** Where "Keep it" leads. */
  back: string;
}

/**
 * The confirmation step of every destructive action (delete a row, a file, a user; roll back;
 * revoke): a form posted without `confirmed=yes` (see isConfirmed) is answered with this page,
 * naming what will be lost, and the same form again, confirmed, so a stray click loses nothing.
 */
export function confirmationPage(c: Context, fields: Record<string, string>, confirmation: Confirmation): Response | Promise<Response> {
  const url = new URL(c.req.url);
  const hidden = Object.entries(fields).filter(([name]) => name !== "confirmed");
  const content = html`<section class="confirm" aria-label="What will be lost">${confirmation.lost}</section>
<form method="post" action="${url.pathname}${url.search}" class="inline">
${hidden.map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
<input type="hidden" name="confirmed" value="yes">
<button type="submit" class="danger">${confirmation.button}</button> <a href="${confirmation.back}">Keep it</a>
</form>`;
  return c.html(layout(confirmation.title, "", {}, content));
}

/** Whether a destructive form came from its confirmation page (confirmationPage). */
export function isConfirmed(fields: Record<string, string>): boolean {
  return fields.confirmed === "yes";
}
