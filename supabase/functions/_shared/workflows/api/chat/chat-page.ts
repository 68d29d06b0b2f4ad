/**
 * The chat page: one HTML document per chat deployment with the title, the message list (an ARIA
 * log), the answer streaming into it as the SSE frames arrive, and the sign-in step of the chat's
 * mode (a password, or an e-mail address and then its code). Its script reads the chat's own
 * path from the address bar, so the same page works at `/chat/<identifier>`, through
 * `/functions/v1/chat/<identifier>` and on a subdomain. Inline script and style carry a per-page
 * nonce; the Content-Security-Policy allows nothing else.
 */
import { escapeHtml } from "../../../http/html.ts";

/** What the page shows before its script runs. */
export interface ChatPageConfig {
  identifier: string;
  title: string;
  description: string | null;
  welcomeMessage: string | null;
  authType: "public" | "password" | "email";
  authenticated: boolean;
  email: string | null;
}

/** The headers of every page (the nonce is the page's). */
export function pageHeaders(nonce: string): Record<string, string> {
  return {
    "content-type": "text/html; charset=utf-8",
    "cache-control": "no-store",
    "referrer-policy": "no-referrer",
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "content-security-policy": `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
  };
}

/** A fresh nonce for one page. */
export function pageNonce(): string {
  return btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(16))));
}

// `hidden` must win over the display rules below (a form's or the chat's flex), or every step shows at once.
const STYLE = `
*{box-sizing:border-box}[hidden]{display:none!important}body{margin:0;font:16px/1.5 system-ui,sans-serif;background:#f4f5f7;color:#1b1d21}
main{max-width:720px;margin:0 auto;min-height:100vh;display:flex;flex-direction:column;background:#fff}
header{padding:16px 20px;border-bottom:1px solid #e3e5e8}h1{margin:0;font-size:1.25rem}header p{margin:4px 0 0;color:#555}
section{padding:16px 20px}form{display:flex;flex-direction:column;gap:8px;max-width:420px}
#chat{flex:1;display:flex;flex-direction:column}#message-form{max-width:none;flex-direction:row;align-items:flex-end}
#message-form label{position:absolute;left:-9999px}textarea{flex:1;resize:vertical;font:inherit;padding:8px}
input{font:inherit;padding:8px}button{font:inherit;padding:8px 16px;border:0;border-radius:6px;background:#2457d6;color:#fff;cursor:pointer}
button:disabled{opacity:.6}ol{list-style:none;margin:0 0 16px;padding:0;flex:1;display:flex;flex-direction:column;gap:10px}
li{max-width:85%;padding:8px 12px;border-radius:10px;white-space:pre-wrap;word-wrap:break-word}
li.user{align-self:flex-end;background:#2457d6;color:#fff}li.assistant{align-self:flex-start;background:#eef0f3}
[role=alert]{color:#b00020;margin:8px 0 0}`;

const SCRIPT = `
const config = JSON.parse(document.getElementById("chat-config").textContent);
const base = location.pathname.replace(/\\/+$/, "");
const $ = (id) => document.getElementById(id);
const storageKey = "orbita-chat-conversation:" + config.identifier;
const newId = () => Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
let conversationId = sessionStorage.getItem(storageKey) || newId();
sessionStorage.setItem(storageKey, conversationId);

function alertIn(id, text) { const el = $(id); el.textContent = text || ""; el.hidden = !text; }
async function post(path, body) {
  const response = await fetch(base + path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body), credentials: "same-origin" });
  const answer = await response.json().catch(() => ({}));
  return { ok: response.ok, status: response.status, body: answer };
}
function showChat() { $("sign-in").hidden = true; $("chat").hidden = false; $("message").focus(); }
function showSignIn(message) {
  $("chat").hidden = true; $("sign-in").hidden = false;
  $("password-form").hidden = config.authType !== "password";
  $("email-form").hidden = config.authType !== "email";
  $("code-form").hidden = true;
  alertIn("sign-in-error", message);
}
function add(role, text) {
  const item = document.createElement("li");
  item.className = role; item.textContent = text;
  item.setAttribute("aria-label", role === "user" ? "You" : config.title);
  $("messages").append(item); item.scrollIntoView({ block: "end" });
  return item;
}
function shown(output) {
  if (typeof output === "string") return output;
  if (output && typeof output === "object" && !Array.isArray(output)) {
    const values = Object.values(output);
    if (values.length === 1 && typeof values[0] === "string") return values[0];
  }
  return JSON.stringify(output, null, 2);
}

async function send(text) {
  alertIn("chat-error", "");
  add("user", text);
  const bubble = add("assistant", "");
  bubble.setAttribute("aria-busy", "true");
  const response = await fetch(base, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ message: text, conversationId }), credentials: "same-origin" });
  if (!(response.headers.get("content-type") || "").startsWith("text/event-stream")) {
    const answer = await response.json().catch(() => ({}));
    bubble.remove();
    if (response.status === 401) return showSignIn(answer.error);
    if (answer.code === "CONVERSATION_FORBIDDEN") { conversationId = newId(); sessionStorage.setItem(storageKey, conversationId); }
    return alertIn("chat-error", answer.error || "The message could not be sent (" + response.status + ")");
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "", streamed = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let end;
    while ((end = buffer.indexOf("\\n\\n")) >= 0) {
      const data = buffer.slice(0, end).split("\\n").filter((line) => line.startsWith("data: ")).map((line) => line.slice(6)).join("\\n");
      buffer = buffer.slice(end + 2);
      if (!data || data === "[DONE]") continue;
      const event = JSON.parse(data);
      if (typeof event.chunk === "string") { streamed += event.chunk; bubble.textContent = streamed; }
      else if (event.event === "done" && !event.success) alertIn("chat-error", event.error || "The workflow failed");
      else if (event.event === "done" && !streamed) bubble.textContent = shown(event.output);
      else if (event.event === "error") alertIn("chat-error", event.error);
    }
  }
  bubble.removeAttribute("aria-busy");
  if (!bubble.textContent) bubble.remove();
}

$("message-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const text = $("message").value.trim();
  if (!text) return;
  $("message").value = "";
  const button = event.submitter; if (button) button.disabled = true;
  try { await send(text); } catch (error) { alertIn("chat-error", "The connection was lost: " + error.message); }
  finally { if (button) button.disabled = false; $("message").focus(); }
});
$("message").addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); $("message-form").requestSubmit(); }
});
$("password-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const answer = await post("/login", { password: $("password").value });
  if (answer.ok) { $("password").value = ""; showChat(); } else alertIn("sign-in-error", answer.body.error);
});
$("email-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const answer = await post("/otp", { email: $("email").value });
  if (!answer.ok) return alertIn("sign-in-error", answer.body.error);
  alertIn("sign-in-error", "");
  $("email-form").hidden = true; $("code-form").hidden = false;
  // The answer is the same whether or not the address may use the chat, so the page cannot say which.
  $("code-sent").textContent = "If " + answer.body.email + " may use this chat, a 6-digit code is on its way to it. It works for 15 minutes.";
  $("code").focus();
});
$("code-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const answer = await post("/otp/verify", { email: $("email").value, code: $("code").value });
  if (answer.ok) { $("code").value = ""; showChat(); } else alertIn("sign-in-error", answer.body.error);
});

if (config.welcomeMessage) add("assistant", config.welcomeMessage);
if (config.authenticated) showChat(); else showSignIn("");
`;

/** The page of a chat. */
export function renderChatPage(config: ChatPageConfig, nonce: string): string {
  const description = config.description ? `<p>${escapeHtml(config.description)}</p>` : "";
  // Inside <script>, only "</" could end the element early; JSON escapes "<" away.
  const data = JSON.stringify(config).replaceAll("<", "\\u003c");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(config.title)}</title>
<style nonce="${nonce}">${STYLE}</style>
</head>
<body>
<main>
<header><h1>${escapeHtml(config.title)}</h1>${description}</header>
<section id="sign-in" aria-labelledby="sign-in-title" hidden>
<h2 id="sign-in-title">Sign in</h2>
<form id="password-form" hidden>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required maxlength="200">
<button type="submit">Sign in</button>
</form>
<form id="email-form" hidden>
<label for="email">E-mail</label>
<input id="email" name="email" type="email" autocomplete="email" required maxlength="320">
<button type="submit">Send code</button>
</form>
<form id="code-form" hidden>
<p id="code-sent"></p>
<label for="code">Code</label>
<input id="code" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required>
<button type="submit">Verify code</button>
</form>
<p id="sign-in-error" role="alert" hidden></p>
</section>
<section id="chat" aria-label="Conversation" hidden>
<ol id="messages" role="log" aria-live="polite"></ol>
<form id="message-form">
<label for="message">Message</label>
<textarea id="message" name="message" rows="2" maxlength="10000" required placeholder="Write a message"></textarea>
<button type="submit">Send</button>
</form>
<p id="chat-error" role="alert" hidden></p>
</section>
<noscript><p>This chat needs JavaScript.</p></noscript>
</main>
<script id="chat-config" type="application/json">${data}</script>
<script nonce="${nonce}">${SCRIPT}</script>
</body>
</html>
`;
}

/** The page of an identifier no chat has. */
export function renderMissingChatPage(identifier: string, nonce: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Chat not found</title><style nonce="${nonce}">${STYLE}</style></head>
<body><main><header><h1>Chat not found</h1><p>No chat is deployed at “${escapeHtml(identifier)}”.</p></header></main></body>
</html>
`;
}
