import { Hono } from "hono";
import { html } from "hono/html";
import { act, flashOf, formFields, invalid } from "../actions.ts";
import { confirmationPage, isConfirmed } from "../confirm.ts";
import { DashboardError, errorInWords } from "../errors.ts";
import { layout } from "../layout.ts";
import type { StackClient } from "../stack-client.ts";

interface Bucket {
  id: string;
  name: string;
  public: boolean;
  file_size_limit: number | null;
  allowed_mime_types: string[] | null;
  created_at: string;
}

/** An entry of storage's object list: a file, or a folder (no id). */
interface ListedObject {
  name: string;
  id: string | null;
  updated_at: string | null;
  metadata: { size?: number; mimetype?: string } | null;
}

/** How long a signed link lasts, in seconds. */
const SIGNED_LINK_SECONDS = 3600;
/** Objects listed per folder. */
const LIST_LIMIT = 1000;
/** Bucket names storage accepts. */
const BUCKET_NAME = /^[a-z0-9][a-z0-9._-]{1,62}$/;

/** An object path for a URL: each segment encoded, the slashes kept. */
function encodePath(path: string): string {
  return path.split("/").map(encodeURIComponent).join("/");
}

/** An object path from a form: no leading or empty segments, no `..`. */
function checkObjectPath(path: string | undefined): string {
  const cleaned = (path ?? "").replace(/^\/+/, "");
  if (!cleaned || cleaned.split("/").some((segment) => segment === "" || segment === "." || segment === "..")) throw invalid("The object path is empty or malformed");
  return cleaned;
}

function checkBucket(bucket: string): string {
  if (!BUCKET_NAME.test(bucket)) throw new DashboardError(404, `There is no bucket ${bucket}`);
  return bucket;
}

/**
 * Storage: buckets and their objects through the storage API as the service role: folders
 * browsed, files uploaded, downloaded, deleted and shared through signed links.
 */
export function storagePages(stack: StackClient, apiUrl: string): Hono {
  const pages = new Hono();

  pages.get("/", async (c) => {
    const buckets = await stack.json<Bucket[]>("/storage/v1/bucket");
    const content = html`<table class="buckets"><thead><tr><th>Bucket</th><th>Public</th><th>Size limit</th><th>Allowed types</th><th>Created</th></tr></thead><tbody>
${buckets.map((bucket) => html`<tr><td><a href="/storage/${bucket.id}">${bucket.name}</a></td><td>${bucket.public ? "yes" : "no"}</td><td>${bucket.file_size_limit ?? "none"}</td><td>${bucket.allowed_mime_types?.join(", ") ?? "any"}</td><td>${bucket.created_at}</td></tr>`)}
</tbody></table>
<details><summary>Create a bucket</summary><form method="post" action="/storage/buckets">
<label>Name <input name="name" required pattern="[a-z0-9][a-z0-9._-]{1,62}"></label>
<label><input type="checkbox" name="public" value="yes"> Public</label>
<button type="submit">Create bucket</button></form></details>`;
    return c.html(layout("Storage", "Storage", flashOf(c), content));
  });

  pages.post("/buckets", async (c) => await act(c, "/storage", async () => {
    const { name, public: isPublic } = await formFields(c);
    if (!name || !BUCKET_NAME.test(name)) throw invalid("A bucket name is 2-63 lower-case letters, digits, dots, dashes or underscores");
    await stack.json("/storage/v1/bucket", { method: "POST", json: { name, public: isPublic === "yes" } });
    return `Created the bucket ${name}`;
  }));

  pages.get("/:bucket", async (c) => {
    const bucket = checkBucket(c.req.param("bucket"));
    const prefix = (c.req.query("prefix") ?? "").replace(/^\/+|\/+$/g, "");
    const objects = await stack.json<ListedObject[]>(`/storage/v1/object/list/${bucket}`, {
      method: "POST",
      json: { prefix, limit: LIST_LIMIT, offset: 0, sortBy: { column: "name", order: "asc" } },
    });
    const here = prefix ? `${prefix}/` : "";
    const back = `/storage/${bucket}${prefix ? `?prefix=${encodeURIComponent(prefix)}` : ""}`;
    const parent = prefix.includes("/") ? prefix.slice(0, prefix.lastIndexOf("/")) : "";
    const content = html`<p><a href="/storage">All buckets</a> · ${bucket}/${here}${prefix ? html` · <a href="/storage/${bucket}${parent ? `?prefix=${encodeURIComponent(parent)}` : ""}">Up</a>` : ""}</p>
<table class="objects"><thead><tr><th>Name</th><th>Type</th><th>Size</th><th>Updated</th><th></th></tr></thead><tbody>
${objects.map((object) => object.id === null
    ? html`<tr><td><a href="/storage/${bucket}?prefix=${encodeURIComponent(here + object.name)}">${object.name}/</a></td><td>folder</td><td></td><td></td><td></td></tr>`
    : html`<tr><td>${object.name}</td><td>${object.metadata?.mimetype ?? ""}</td><td>${object.metadata?.size ?? ""}</td><td>${object.updated_at ?? ""}</td><td>
<a href="/storage/${bucket}/download/${encodePath(here + object.name)}">Download</a>
<form method="post" action="/storage/${bucket}/sign"><input type="hidden" name="path" value="${here + object.name}"><input type="hidden" name="back" value="${back}"><button type="submit">Signed link</button></form>
<form method="post" action="/storage/${bucket}/delete"><input type="hidden" name="path" value="${here + object.name}"><input type="hidden" name="back" value="${back}"><button type="submit" class="secondary">Delete</button></form></td></tr>`)}
</tbody></table>
${objects.length === 0 ? html`<p>This folder is empty.</p>` : ""}
<h2>Upload</h2>
<form method="post" action="/storage/${bucket}/upload" enctype="multipart/form-data" class="inline" aria-label="Upload a file">
<input type="hidden" name="folder" value="${prefix}">
<label>File <input type="file" name="file" required></label>
<label>Name (optional) <input name="name" placeholder="the file's own name"></label>
<label><input type="checkbox" name="upsert" value="yes"> Replace an existing object</label>
<button type="submit">Upload</button>
</form>`;
    const flash = flashOf(c);
    const signed = c.req.query("signed");
    return c.html(layout(`Bucket ${bucket}`, "Storage", flash, html`${signed ? html`<p>Signed link, valid for ${SIGNED_LINK_SECONDS / 60} minutes: <a class="signed-link" href="${signed}">${signed}</a></p>` : ""}${content}`));
  });

  pages.post("/:bucket/upload", async (c) => {
    const bucket = checkBucket(c.req.param("bucket"));
    const body = await c.req.parseBody();
    const folder = typeof body.folder === "string" ? body.folder : "";
    const back = `/storage/${bucket}${folder ? `?prefix=${encodeURIComponent(folder)}` : ""}`;
    return await act(c, back, async () => {
      const file = body.file;
      if (!(file instanceof File) || (file.size === 0 && !file.name)) throw invalid("Choose a file to upload");
      const name = typeof body.name === "string" && body.name.trim() ? body.name.trim() : file.name;
      const path = checkObjectPath(folder ? `${folder}/${name}` : name);
      await stack.json(`/storage/v1/object/${bucket}/${encodePath(path)}`, {
        method: "POST",
        body: await file.arrayBuffer(),
        headers: { "content-type": file.type || "application/octet-stream", "x-upsert": body.upsert === "yes" ? "true" : "false" },
      });
      return `Uploaded ${path}`;
    });
  });

  pages.get("/:bucket/download/*", async (c) => {
    const bucket = checkBucket(c.req.param("bucket"));
    const path = checkObjectPath(decodeURIComponent(c.req.path.slice(`/storage/${bucket}/download/`.length)));
    const response = await stack.fetch(`/storage/v1/object/${bucket}/${encodePath(path)}`);
    if (!response.ok) throw new DashboardError(response.status, errorInWords(await response.json().catch(() => null), response.status));
    const fileName = path.split("/").pop() ?? "download";
    return new Response(response.body, {
      headers: {
        "content-type": response.headers.get("content-type") ?? "application/octet-stream",
        "content-disposition": `attachment; filename*=UTF-8''${encodeURIComponent(fileName)}`,
      },
    });
  });

  pages.post("/:bucket/sign", async (c) => {
    const bucket = checkBucket(c.req.param("bucket"));
    const { path, back } = await formFields(c);
    const destination = back?.startsWith(`/storage/${bucket}`) ? back : `/storage/${bucket}`;
    let signedUrl = "";
    const response = await act(c, destination, async () => {
      const signed = await stack.json<{ signedURL: string }>(`/storage/v1/object/sign/${bucket}/${encodePath(checkObjectPath(path))}`, { method: "POST", json: { expiresIn: SIGNED_LINK_SECONDS } });
      signedUrl = `${apiUrl}/storage/v1${signed.signedURL}`;
      return `Signed ${path}`;
    });
    if (!signedUrl) return response;
    const location = new URL(response.headers.get("location") ?? destination, "http://dashboard");
    location.searchParams.set("signed", signedUrl);
    return c.redirect(`${location.pathname}${location.search}`, 303);
  });

  pages.post("/:bucket/delete", async (c) => {
    const bucket = checkBucket(c.req.param("bucket"));
    const fields = await formFields(c);
    const { path, back } = fields;
    const returnTo = back?.startsWith(`/storage/${bucket}`) ? back : `/storage/${bucket}`;
    if (!isConfirmed(fields)) {
      return confirmationPage(c, fields, {
        title: `Delete ${bucket}/${checkObjectPath(path)}?`,
        lost: html`<p>The file <code>${bucket}/${path}</code> and its bytes are deleted for good; signed links to it stop working.</p>`,
        button: "Delete file",
        back: returnTo,
      });
    }
    return await act(c, returnTo, async () => {
      const removed = await stack.json<unknown[]>(`/storage/v1/object/${bucket}`, { method: "DELETE", json: { prefixes: [checkObjectPath(path)] } });
      if (removed.length === 0) throw new DashboardError(404, `${path} no longer exists`);
      return `Deleted ${path}`;
    });
  });

  return pages;
}
