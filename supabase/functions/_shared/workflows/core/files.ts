/**
 * Files a run receives (the spec's file input entries): the rules an entry must meet, and the file
 * store a run uses when its caller provides none. The store is an injected service (see
 * ExecutorServices) so the execute endpoint can store inline content and hand out presigned URLs.
 */
import { z } from "zod";
import { preview } from "./values.ts";
import type { FileEntry, FileStore, UserFile } from "./context.ts";
import { WorkflowError } from "./errors.ts";

/** Largest inline file, decoded (spec, "Limits"). */
export const MAX_INLINE_FILE_BYTES = 20 * 1024 * 1024;

/** How long a presigned file URL stays valid (spec: 5 minutes). */
export const FILE_URL_TTL_MS = 5 * 60_000;

/** An inline file over MAX_INLINE_FILE_BYTES: the execute endpoint answers it 413, not 400. */
export class FileTooLargeError extends WorkflowError {
  constructor(message: string) {
    super("INVALID_INPUT", message);
    this.name = "FileTooLargeError";
  }
}

const fileEntrySchema = z
  .object({
    type: z.enum(["file", "url"]),
    data: z.string().min(1),
    name: z.string().min(1),
    mime: z.string().min(1).optional(),
  })
  .strict();

const DATA_URL = /^data:([^;,]+)?(?:;[^;,]+)*;base64,([A-Za-z0-9+/]*={0,2})$/;

/** Decoded size of base64 text, computed without decoding it. */
function base64Size(text: string): number {
  const padding = text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0;
  return Math.floor((text.length * 3) / 4) - padding;
}

/** Checks one files entry against the spec's rules and returns it typed. */
export function checkFileEntry(value: unknown, where: string): FileEntry & { size: number; mimeType: string } {
  const parsed = fileEntrySchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new WorkflowError("INVALID_INPUT", `${where}: ${issue.path.join(".") || "entry"} ${issue.message.replace(/^Invalid input: /, "")}`);
  }
  const entry = parsed.data;
  if (entry.type === "url") {
    let url: URL;
    try {
      url = new URL(entry.data);
    } catch {
      throw new WorkflowError("INVALID_INPUT", `${where}: "${preview(entry.data, 40)}" is not a URL`);
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new WorkflowError("INVALID_INPUT", `${where}: only http(s) URLs are accepted`);
    return { ...entry, size: 0, mimeType: entry.mime ?? "application/octet-stream" };
  }
  const match = DATA_URL.exec(entry.data);
  if (!match) throw new WorkflowError("INVALID_INPUT", `${where}: data must be a base64 data URL (data:<mime>;base64,...)`);
  const size = base64Size(match[2]);
  if (size > MAX_INLINE_FILE_BYTES) throw new FileTooLargeError(`${where}: "${entry.name}" is ${size} bytes; inline files may be at most 20 MB`);
  return { ...entry, size, mimeType: entry.mime ?? match[1] ?? "application/octet-stream" };
}

/**
 * The store used when the caller provides none: no I/O, so inline content stays a data URL and URL
 * entries pass through. The execute endpoint supplies a storage-backed store with presigned URLs.
 */
export function memoryFileStore(newId: () => string, now: () => number): FileStore {
  return {
    store(entry) {
      const checked = checkFileEntry(entry, "file");
      const uploadedAt = new Date(now());
      const file: UserFile = {
        id: `file_${newId()}`,
        name: entry.name,
        url: entry.data,
        size: checked.size,
        type: checked.mimeType,
        key: `${entry.type === "url" ? "url" : "inline"}/${entry.name}`,
      };
      if (entry.type === "file") {
        file.uploadedAt = uploadedAt.toISOString();
        file.expiresAt = new Date(uploadedAt.getTime() + FILE_URL_TTL_MS).toISOString();
      }
      return Promise.resolve(file);
    },
  };
}
