import { html } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";

/** Server-rendered HTML, as `html` from hono/html builds it. */
export type Markup = HtmlEscapedString | Promise<HtmlEscapedString>;

/** The pages in the navigation, in order. */
const SECTIONS: [string, string][] = [
  ["/tables", "Tables"],
  ["/sql", "SQL"],
  ["/auth", "Auth"],
  ["/storage", "Storage"],
  ["/mail", "Mail"],
  ["/workflows", "Workflows"],
  ["/gamification", "Gamification"],
];

/** What a page shows above its content after a form: the outcome of the last action. */
export interface Flash {
  notice?: string | null;
  error?: string | null;
}

/**
 * Every page's frame: the navigation, the outcome of the last action and the notice that this is
 * the local platform's dashboard (hosted projects use Supabase's).
 */
export function layout(title: string, section: string, flash: Flash, content: Markup): Markup {
  return html`<!doctype html>
<html lang="en" data-theme="light">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Orbita local dashboard</title>
<link rel="icon" href="/favicon.ico" type="image/svg+xml">
<link rel="stylesheet" href="/assets/pico.css">
<link rel="stylesheet" href="/assets/dashboard.css">
</head>
<body>
<header class="container-fluid">
<p class="local-notice" role="note">Local dashboard of the Orbita local platform (127.0.0.1 only, acting with the service_role key). Hosted projects use Supabase's dashboard.</p>
<nav aria-label="Sections"><ul><li><strong>Orbita</strong></li></ul><ul>${SECTIONS.map(([href, label]) => html`<li><a href="${href}"${label === section ? html` aria-current="page"` : ""}>${label}</a></li>`)}</ul></nav>
</header>
<main class="container-fluid">
<h1>${title}</h1>
${flash.notice ? html`<p role="status" class="notice">${flash.notice}</p>` : ""}
${flash.error ? html`<p role="alert" class="error">${flash.error}</p>` : ""}
${content}
</main>
</body>
</html>`;
}

/** A value as a table cell shows it: JSON for objects, "NULL" for null. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return "NULL";
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}
