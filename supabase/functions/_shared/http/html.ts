/** Escapes text for HTML element content and double-quoted attribute values (the portal's pages and e-mails, the chat page). */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[char] ?? char);
}

const STYLE = `
body{margin:0;background:#f4f6f9;color:#1f2430;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif}
main{max-width:40rem;margin:2rem auto;padding:1.5rem 2rem;background:#fff;border-radius:8px;box-shadow:0 1px 3px rgba(0,0,0,.12)}
h1{font-size:1.6rem;margin:.2rem 0 1rem}h2{font-size:1.2rem;margin:1.5rem 0 .5rem}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.35rem 1rem;margin:0}dt{font-weight:600;color:#4a5160}dd{margin:0}
label{display:block;font-weight:600;margin-top:1rem}.hint{color:#4a5160;margin:.2rem 0 .4rem;font-size:.95rem}
input,textarea{font:inherit;width:100%;box-sizing:border-box;padding:.55rem .7rem;border:2px solid #6b7280;border-radius:6px}
input[type=checkbox]{width:auto}
.actions{display:flex;gap:.75rem;flex-wrap:wrap;margin-top:1.25rem}
button{font:inherit;font-weight:600;padding:.65rem 1.2rem;border-radius:6px;border:2px solid transparent;cursor:pointer}
.approve{background:#0b6b3a;color:#fff}.reject{background:#fff;color:#9b1c1c;border-color:#9b1c1c}
:focus-visible{outline:3px solid #1d4ed8;outline-offset:2px}
.alert{border-left:4px solid #9b1c1c;background:#fdf2f2;padding:.6rem .9rem;margin:1rem 0}
.ok{border-left:4px solid #0b6b3a;background:#effaf3;padding:.6rem .9rem;margin:1rem 0}
.muted{color:#4a5160}.message{white-space:pre-wrap}`;

/**
 * The frame of the pages a link with a token opens (the portal's proposal approval, a workflow's
 * approval): responsive, no scripts, not indexed; `lang` is the page's language.
 */
export function htmlDocument(lang: string, title: string, body: string): string {
  return `<!doctype html>
<html lang="${escapeHtml(lang)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)} · Orbita</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>`;
}

/**
 * Headers of a page whose URL holds a token (an approval link): kept out of caches, referrers and
 * other sites' frames; only inline styles, and forms posting back to the page itself.
 */
export const TOKEN_PAGE_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
};
