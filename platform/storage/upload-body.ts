import { storageErrors } from "./errors.ts";
import type { SizeLimit } from "./object-store.ts";

/**
 * Reads an upload the two ways storage-js sends one: a Blob/File/FormData goes as
 * multipart/form-data (fields `cacheControl`, `metadata`, `contentEncoding`, then the file part),
 * everything else as the raw body with `content-type`, `cache-control` and base64 `x-metadata`
 * headers.
 */

/** What an upload carries besides the bytes, and the bytes themselves. */
export interface UploadPayload {
  /** The content type as given (with parameters), stored and served back as is. */
  contentType: string;
  cacheControl: string;
  contentEncoding?: string;
  userMetadata: Record<string, unknown> | null;
  /** A raw body still to be streamed, or the file part of a multipart body already in memory. */
  bytes: ReadableStream<Uint8Array> | Uint8Array<ArrayBuffer> | null;
}

/** Room for multipart boundaries and fields around the file part. */
const MULTIPART_OVERHEAD = 1024 ** 2;

/**
 * Parses the request. A multipart body is buffered (bounded by the size limit plus a little room),
 * since the platform has no streaming multipart parser; a raw body is left for the caller to
 * stream to disk.
 */
export async function readUpload(request: Request, limit: SizeLimit): Promise<UploadPayload> {
  const contentType = request.headers.get("content-type") ?? "";
  if (/^multipart\/form-data/i.test(contentType)) return readMultipart(request, contentType, limit);
  return {
    contentType: contentType || "application/octet-stream",
    cacheControl: request.headers.get("cache-control") ?? "no-cache",
    contentEncoding: request.headers.get("content-encoding") ?? undefined,
    userMetadata: parseMetadata(request.headers.get("x-metadata"), "base64"),
    bytes: request.body,
  };
}

async function readMultipart(request: Request, contentType: string, limit: SizeLimit): Promise<UploadPayload> {
  const raw = await readCapped(request.body, limit.bytes + MULTIPART_OVERHEAD, limit);
  let form: FormData;
  try {
    form = await new Response(raw, { headers: { "content-type": contentType } }).formData();
  } catch {
    throw storageErrors.invalidRequest("The multipart body could not be parsed");
  }
  let file: File | undefined;
  for (const value of form.values()) {
    if (typeof value !== "string") {
      file = value;
      break;
    }
  }
  if (!file) throw storageErrors.invalidRequest("No content provided");
  if (file.size > limit.bytes) throw limit.failure();
  const cacheControl = stringField(form, "cacheControl");
  return {
    contentType: file.type || "application/octet-stream",
    cacheControl: cacheControl ? `max-age=${cacheControl}` : "no-cache",
    contentEncoding: stringField(form, "contentEncoding"),
    userMetadata: parseMetadata(stringField(form, "metadata") ?? null, "json"),
    bytes: new Uint8Array(await file.arrayBuffer()),
  };
}

function stringField(form: FormData, name: string): string | undefined {
  const value = form.get(name);
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** User metadata: a JSON object, base64-encoded in the `x-metadata` header. */
function parseMetadata(value: string | null, encoding: "base64" | "json"): Record<string, unknown> | null {
  if (value === null) return null;
  try {
    const text = encoding === "base64" ? Buffer.from(value, "base64").toString("utf8") : value;
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // Reported below as the same error as a non-object.
  }
  throw storageErrors.invalidParameter("metadata", "Invalid Parameter metadata: it must be a JSON object");
}

/** Reads a whole body of at most `cap` bytes; past that, reads and drops the rest and fails with `limit`. */
async function readCapped(body: ReadableStream<Uint8Array> | null, cap: number, limit: SizeLimit): Promise<Uint8Array<ArrayBuffer>> {
  if (!body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let tooLarge = false;
  const bound = Math.max(cap * 4, 256 * 1024 ** 2);
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > cap) {
        tooLarge = true;
        chunks.length = 0;
        if (size > bound) {
          await reader.cancel();
          break;
        }
        continue;
      }
      chunks.push(value);
    }
  } catch {
    throw storageErrors.invalidRequest("The request body could not be read");
  }
  if (tooLarge) throw limit.failure();
  return new Uint8Array(Buffer.concat(chunks));
}
