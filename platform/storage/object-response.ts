import { StorageFailure } from "./errors.ts";
import type { ObjectRow } from "./objects-repository.ts";
import type { StoredBytes } from "./object-store.ts";

/**
 * Builds the response that serves an object's bytes with the headers Storage sends: the stored
 * content type and cache-control, the ETag, Last-Modified, and a Content-Disposition when the
 * client asked for a download (`?download` or `?download=<file name>`). A matching If-None-Match
 * answers 304 so browsers can revalidate cheaply, and a single `Range` answers 206 so media can
 * be streamed from public URLs. HEAD gets the headers only.
 */
export function objectResponse(request: Request, object: ObjectRow, bytes: StoredBytes): Response {
  const metadata = object.metadata;
  const headers = new Headers({
    "content-type": metadata?.mimetype ?? "application/octet-stream",
    "content-length": String(bytes.size),
    "cache-control": metadata?.cacheControl ?? "no-cache",
    "last-modified": lastModified(object).toUTCString(),
    "accept-ranges": "bytes",
  });
  if (metadata?.eTag) headers.set("etag", metadata.eTag);
  if (metadata?.contentEncoding) headers.set("content-encoding", metadata.contentEncoding);
  const download = new URL(request.url).searchParams.get("download");
  if (download !== null) headers.set("content-disposition", attachment(download || object.name.split("/").pop() || object.name));

  const ifNoneMatch = request.headers.get("if-none-match");
  if (request.method === "HEAD" || (ifNoneMatch && metadata?.eTag && ifNoneMatch === metadata.eTag)) {
    void bytes.close();
    if (request.method !== "HEAD") {
      headers.delete("content-length");
      return new Response(null, { status: 304, headers });
    }
    return new Response(null, { status: 200, headers });
  }
  const range = parseRange(request.headers.get("range"), bytes.size);
  if (range === "unsatisfiable") {
    void bytes.close();
    throw new StorageFailure("InvalidRange", 416, "invalid range provided", "invalid_range");
  }
  if (range) {
    headers.set("content-range", `bytes ${range.start}-${range.end}/${bytes.size}`);
    headers.set("content-length", String(range.end - range.start + 1));
    return new Response(bytes.stream(range), { status: 206, headers });
  }
  return new Response(bytes.stream(), { status: 200, headers });
}

/**
 * One `bytes=` range (first-last, first-, or -suffix). Multiple ranges and other units are ignored
 * (the whole object is served), as HTTP allows; a range past the end is unsatisfiable.
 */
function parseRange(header: string | null, size: number): { start: number; end: number } | "unsatisfiable" | null {
  const match = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null;
  if (!match || (match[1] === "" && match[2] === "")) return null;
  let start: number;
  let end: number;
  if (match[1] === "") {
    const suffix = Number(match[2]);
    if (suffix === 0) return "unsatisfiable";
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(match[1]);
    end = match[2] === "" ? size - 1 : Math.min(Number(match[2]), size - 1);
  }
  if (start >= size || start > end) return "unsatisfiable";
  return { start, end };
}

function lastModified(object: ObjectRow): Date {
  const fromMetadata = object.metadata?.lastModified ? new Date(object.metadata.lastModified) : null;
  return fromMetadata && !Number.isNaN(fromMetadata.getTime()) ? fromMetadata : new Date(object.updated_at);
}

/** An attachment header that survives any file name: an ASCII fallback plus the RFC 5987 form. */
function attachment(fileName: string): string {
  const ascii = fileName.replace(/[^\x20-\x7e]|["\\]/g, "_");
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(fileName)}`;
}

/** The object's details as GET /object/info answers them (storage-js camel-cases the keys). */
export function objectInfo(object: ObjectRow) {
  return {
    id: object.id,
    name: object.name,
    version: object.version,
    bucket_id: object.bucket_id,
    size: object.metadata?.size ?? null,
    content_type: object.metadata?.mimetype ?? null,
    content_encoding: object.metadata?.contentEncoding ?? null,
    cache_control: object.metadata?.cacheControl ?? null,
    etag: object.metadata?.eTag ?? null,
    metadata: object.user_metadata ?? {},
    last_modified: lastModified(object).toISOString(),
    created_at: object.created_at,
  };
}
