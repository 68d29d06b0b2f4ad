/**
 * Typed trigger inputs (the spec's Input Format): each field's value is taken from the request (or,
 * in a manual run, from the field's value column) and coerced to its declared type. A value that
 * cannot be coerced is refused with INVALID_INPUT naming the field, never passed on silently.
 */
import { z } from "zod";
import type { InputField } from "../state/catalogue.ts";
import type { FileEntry, FileStore, UserFile } from "../engine/context.ts";
import { WorkflowError } from "../engine/errors.ts";
import { asRecord, preview } from "./block-handler.ts";

/** Largest inline file, decoded (spec, "Limits"). */
export const MAX_INLINE_FILE_BYTES = 20 * 1024 * 1024;

/** How long a presigned file URL stays valid (spec: 5 minutes). */
export const FILE_URL_TTL_MS = 5 * 60_000;

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
  if (size > MAX_INLINE_FILE_BYTES) throw new WorkflowError("INVALID_INPUT", `${where}: "${entry.name}" is ${size} bytes; inline files may be at most 20 MB`);
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

function coerce(field: InputField, value: unknown, where: string): unknown {
  if (value === undefined || value === null) return null;
  const fail = (expected: string) => new WorkflowError("INVALID_INPUT", `${where} must be ${expected} (got ${preview(value)})`);
  switch (field.type) {
    case "string":
      if (typeof value === "string") return value;
      if (typeof value === "number" || typeof value === "boolean") return String(value);
      throw fail("a string");
    case "number": {
      if (typeof value === "number" && Number.isFinite(value)) return value;
      const parsed = typeof value === "string" && value.trim() !== "" ? Number(value) : Number.NaN;
      if (Number.isFinite(parsed)) return parsed;
      throw fail("a number");
    }
    case "boolean":
      if (typeof value === "boolean") return value;
      if (value === "true" || value === 1 || value === "1") return true;
      if (value === "false" || value === 0 || value === "0") return false;
      throw fail("a boolean");
    case "json":
      if (typeof value !== "string") return value;
      try {
        return JSON.parse(value);
      } catch {
        throw fail("JSON");
      }
    case "files":
      return Array.isArray(value) ? value : [value];
  }
}

/** Where an input's typed fields come from, and the services to store files. */
export interface InputContext {
  /** "API trigger" or similar, for messages. */
  label: string;
  executionId: string;
  files: FileStore;
}

/**
 * Applies an Input Format to a request body. Returns the typed fields (missing ones are null) and
 * the structured body: the body with the typed values laid over it. A body wrapping its fields in
 * `input` (`{"input": {...}}`) is accepted too, as Sim's clients send it.
 */
export async function applyInputFormat(fields: readonly InputField[], body: unknown, context: InputContext): Promise<{ typed: Record<string, unknown>; structured: Record<string, unknown> }> {
  const raw = body === undefined || body === null ? {} : asRecord(body);
  if (raw === null) throw new WorkflowError("INVALID_INPUT", `${context.label}: the request body must be a JSON object with the fields ${fields.map((field) => field.name).join(", ")}`);
  const nested = asRecord(raw.input);
  const source = nested !== null && fields.every((field) => !Object.hasOwn(raw, field.name)) ? nested : raw;
  const typed: Record<string, unknown> = {};
  for (const field of fields) {
    const where = `${context.label} field "${field.name}"`;
    const value = coerce(field, Object.hasOwn(source, field.name) ? source[field.name] : undefined, where);
    if (field.type === "files" && Array.isArray(value)) {
      const files: UserFile[] = [];
      for (const [index, entry] of value.entries()) {
        checkFileEntry(entry, `${where}[${index}]`);
        files.push(await context.files.store(entry as FileEntry, { executionId: context.executionId, field: field.name }));
      }
      typed[field.name] = files;
    } else {
      typed[field.name] = value;
    }
  }
  return { typed, structured: { ...source, ...typed } };
}

/** The value column of an Input Format, as the body of a manual run. */
export function valueColumn(fields: readonly InputField[]): Record<string, unknown> {
  return Object.fromEntries(fields.filter((field) => field.value !== undefined).map((field) => [field.name, field.value]));
}
