/**
 * The inbox page at `/`: a list of caught messages and a reader, built in the browser from the JSON
 * API. Message fields are inserted with textContent and HTML bodies render in a sandboxed frame, so
 * a caught email cannot run script in the page.
 */
export function inboxPage(): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Orbita mail</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
  body { font: 14px/1.4 system-ui, sans-serif; margin: 0; display: grid; grid-template-columns: 360px 1fr; height: 100vh; }
  header { grid-column: 1 / 3; padding: 8px 16px; background: #1c1c1c; color: #eee; display: flex; gap: 12px; align-items: center; }
  header h1 { font-size: 16px; margin: 0; flex: 1; }
  #list { overflow: auto; border-right: 1px solid #ddd; margin: 0; padding: 0; list-style: none; }
  #list li { padding: 8px 12px; border-bottom: 1px solid #eee; cursor: pointer; }
  #list li:hover, #list li.active { background: #eef6ff; }
  #list .subject { font-weight: 600; }
  #list .meta { color: #666; font-size: 12px; }
  #reader { overflow: auto; padding: 16px; }
  #reader dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; }
  #reader dt { color: #666; }
  iframe { width: 100%; height: 60vh; border: 1px solid #ddd; }
  pre { white-space: pre-wrap; background: #f6f6f6; padding: 8px; }
  body { grid-template-rows: auto 1fr; }
</style>
</head>
<body>
<header><h1>Orbita mail catcher</h1><input id="filter" placeholder="filter by to address"><button id="refresh">Refresh</button><button id="clear">Delete all</button></header>
<ul id="list"></ul>
<section id="reader"><p>Select a message.</p></section>
<script>
const list = document.getElementById("list");
const reader = document.getElementById("reader");
const filter = document.getElementById("filter");
function el(tag, text, cls) { const node = document.createElement(tag); if (text !== undefined) node.textContent = text; if (cls) node.className = cls; return node; }
async function load() {
  const query = filter.value.trim() ? "?to=" + encodeURIComponent(filter.value.trim()) : "";
  const messages = await (await fetch("/api/messages" + query)).json();
  list.replaceChildren();
  if (messages.length === 0) list.append(el("li", "No messages."));
  for (const message of messages) {
    const item = el("li");
    item.append(el("div", message.subject, "subject"), el("div", "To " + message.to.join(", "), "meta"), el("div", new Date(message.created_at).toLocaleString() + (message.attachments.length ? " · " + message.attachments.length + " attachment(s)" : ""), "meta"));
    item.onclick = () => { for (const other of list.children) other.classList.remove("active"); item.classList.add("active"); show(message.id); };
    list.append(item);
  }
}
async function show(id) {
  const message = await (await fetch("/api/messages/" + id)).json();
  reader.replaceChildren();
  reader.append(el("h2", message.subject));
  const fields = el("dl");
  for (const [name, value] of [["From", message.from], ["To", message.to.join(", ")], ["Cc", message.cc.join(", ")], ["Reply-To", message.reply_to.join(", ")], ["Date", new Date(message.created_at).toLocaleString()], ["Id", message.id]]) {
    if (!value) continue;
    fields.append(el("dt", name), el("dd", value));
  }
  reader.append(fields);
  if (message.attachments.length) {
    const files = el("ul");
    for (const file of message.attachments) {
      const link = el("a", file.filename + " (" + file.content_type + ", " + file.size + " bytes)");
      link.href = "/api/messages/" + id + "/attachments/" + file.index;
      const row = el("li"); row.append(link); files.append(row);
    }
    reader.append(el("h3", "Attachments"), files);
  }
  if (message.html !== null) {
    const frame = document.createElement("iframe");
    frame.setAttribute("sandbox", "");
    frame.src = "/api/messages/" + id + "/html";
    reader.append(el("h3", "HTML"), frame);
  }
  if (message.text !== null) reader.append(el("h3", "Text"), el("pre", message.text));
}
document.getElementById("refresh").onclick = load;
document.getElementById("clear").onclick = async () => { if (confirm("Delete all caught messages?")) { await fetch("/api/messages", { method: "DELETE" }); reader.replaceChildren(); load(); } };
filter.onchange = load;
load();
</script>
</body>
</html>`;
}
