import { readFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { PROJECT_ROOT } from "../config/stack-config.ts";
import type { AuthSettings, TemplateType } from "./settings.ts";

/** The values a template can show, named as GoTrue's template data names them. */
export interface TemplateData {
  SiteURL: string;
  ConfirmationURL?: string;
  Email: string;
  NewEmail?: string;
  SendingTo?: string;
  Token: string;
  TokenHash?: string;
  RedirectTo?: string;
  Data: Record<string, unknown>;
}

/** GoTrue v2.189's built-in subjects. */
const DEFAULT_SUBJECTS: Record<TemplateType, string> = {
  invite: "You have been invited",
  confirmation: "Confirm Your Email",
  recovery: "Reset Your Password",
  magic_link: "Your Magic Link",
  email_change: "Confirm Email Change",
  reauthentication: "Confirm reauthentication",
};

/** GoTrue v2.189's built-in bodies. */
const DEFAULT_BODIES: Record<TemplateType, string> = {
  invite: `<h2>You have been invited</h2>

<p>You have been invited to create a user on {{ .SiteURL }}. Follow this link to accept the invite:</p>
<p><a href="{{ .ConfirmationURL }}">Accept the invite</a></p>
<p>Alternatively, enter the code: {{ .Token }}</p>`,
  confirmation: `<h2>Confirm Your Email</h2>

<p>Follow this link to confirm your email:</p>
<p><a href="{{ .ConfirmationURL }}">Confirm your email address</a></p>
<p>Alternatively, enter the code: {{ .Token }}</p>
`,
  recovery: `<h2>Reset password</h2>

<p>Follow this link to reset the password for your user:</p>
<p><a href="{{ .ConfirmationURL }}">Reset password</a></p>
<p>Alternatively, enter the code: {{ .Token }}</p>`,
  magic_link: `<h2>Magic Link</h2>

<p>Follow this link to login:</p>
<p><a href="{{ .ConfirmationURL }}">Log In</a></p>
<p>Alternatively, enter the code: {{ .Token }}</p>`,
  email_change: `<h2>Confirm email address change</h2>

<p>Follow this link to confirm the update of your email address from {{ .Email }} to {{ .NewEmail }}:</p>
<p><a href="{{ .ConfirmationURL }}">Change email address</a></p>
<p>Alternatively, enter the code: {{ .Token }}</p>`,
  reauthentication: `<h2>Confirm reauthentication</h2>

<p>Enter the code: {{ .Token }}</p>`,
};

const HTML_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&#34;", "'": "&#39;" };

/** The value a dotted reference (`.Token`, `.Data.name`) names, or "" when there is none. */
function lookup(data: TemplateData, path: string[]): string {
  let node: unknown = data;
  for (const part of path) {
    if (node === null || typeof node !== "object") return "";
    node = (node as Record<string, unknown>)[part];
  }
  if (node === undefined || node === null) return "";
  return typeof node === "object" ? JSON.stringify(node) : String(node);
}

/**
 * Fills `{{ .Field }}` and `{{ .Data.key }}` references, HTML-escaping the values as Go's
 * html/template does in text. Only field references are supported (no `if`/`range` actions);
 * anything else between braces is left as written.
 */
export function renderTemplate(template: string, data: TemplateData, escape: boolean): string {
  return template.replace(/\{\{-?\s*\.([A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)\s*-?\}\}/g, (_match, path: string) => {
    const value = lookup(data, path.split("."));
    return escape ? value.replace(/[&<>"']/g, (character) => HTML_ESCAPES[character]) : value;
  });
}

/** The subject and HTML of a mail, from `[auth.email.template.<type>]` or GoTrue's defaults. */
export function composeMail(settings: AuthSettings, type: TemplateType, data: TemplateData): { subject: string; html: string } {
  const custom = settings.templates[type];
  let body = DEFAULT_BODIES[type];
  if (custom?.contentPath) {
    const path = isAbsolute(custom.contentPath) ? custom.contentPath : join(PROJECT_ROOT, custom.contentPath);
    body = readFileSync(path, "utf8");
  }
  return {
    subject: renderTemplate(custom?.subject ?? DEFAULT_SUBJECTS[type], data, false),
    html: renderTemplate(body, data, true),
  };
}
