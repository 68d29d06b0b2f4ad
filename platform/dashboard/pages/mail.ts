import { Hono } from "hono";
import { html } from "hono/html";
import type { StackConfig } from "../../config/stack-config.ts";
import { layout } from "../layout.ts";

/** Mail: the mail catcher's own page (the caught messages), linked and embedded. */
export function mailPages(config: StackConfig): Hono {
  const pages = new Hono();
  const mailUrl = `http://127.0.0.1:${config.ports.mail}`;
  pages.get("/", (c) => c.html(layout("Mail", "Mail", {}, html`<p>Every message the stack sends is caught here, never delivered. <a href="${mailUrl}" target="_blank" rel="noopener">Open the mail catcher</a> (${mailUrl}).</p>
<iframe src="${mailUrl}" title="Caught mail" style="width: 100%; height: 75vh; border: 1px solid #ccc"></iframe>`)));
  return pages;
}
