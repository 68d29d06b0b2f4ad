/**
 * The Input Format shared by the API, manual and webhook triggers: its config schema and rules, and
 * how a request's values are typed by it. Each field's value is taken from the request (or, in a
 * manual run, from the field's value column) and coerced to its declared type. A value that cannot
 * be coerced is refused with INVALID_INPUT naming the field, never passed on silently.
 */
import { z } from "zod";
import type { FileEntry, FileStore, UserFile } from "../core/context.ts";
import { WorkflowError } from "../core/errors.ts";
import { checkFileEntry } from "../core/files.ts";
import { asRecord, preview } from "../core/values.ts";
import type { ConfigRule } from "../state/config-rules.ts";
import type { BlockRun } from "../core/block-handler.ts";
import { identifier } from "./config-parts.ts";

/** The Input Format field types of the spec's API trigger. */
export const INPUT_FIELD_TYPES = ["string", "number", "boolean", "json", "files"] as const;

/** One row of an Input Format. `value` is the editor's value column, used by manual runs only. */
export const inputFieldSchema = z
  .object({
    name: identifier,
    type: z.enum(INPUT_FIELD_TYPES),
    value: z.unknown().optional(),
    description: z.string().optional(),
  })
  .strict();

/** The config of a trigger typed by an Input Format. */
export const inputFormatConfigSchema = z.object({ inputFormat: z.array(inputFieldSchema).max(100).optional() }).strict();

/** One Input Format field, parsed. */
export type InputField = z.output<typeof inputFieldSchema>;

/** Field names are unique, and `input` is the whole body's. */
export const inputFormatRules: readonly ConfigRule[] = [
  { rule: "unique", list: "inputFormat", field: "name", message: 'name "{name}" is used twice in inputFormat' },
  { rule: "reserved", list: "inputFormat", field: "name", values: ["input"], message: '"input" is reserved for the whole request body (<…input>)' },
];

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
    if (field.type === "files" && Array.isArray(value)) value.forEach((entry, index) => checkFileEntry(entry, `${where}[${index}]`));
    typed[field.name] = value;
  }
  // Every field and file entry is checked before the first file is stored, so input refused
  // half-way leaves no stored file behind.
  for (const field of fields) {
    const value = typed[field.name];
    if (field.type !== "files" || !Array.isArray(value)) continue;
    const files: UserFile[] = [];
    for (const entry of value) files.push(await context.files.store(entry as FileEntry, { executionId: context.executionId, field: field.name }));
    typed[field.name] = files;
  }
  return { typed, structured: { ...source, ...typed } };
}

/** The value column of an Input Format, as the body of a manual run. */
export function valueColumn(fields: readonly InputField[]): Record<string, unknown> {
  return Object.fromEntries(fields.filter((field) => field.value !== undefined).map((field) => [field.name, field.value]));
}

/** The resolved config of a trigger typed by an Input Format. */
export interface InputFormatInput {
  inputFormat?: InputField[];
}

/** The request body, or for a manual run without one, the Input Format's value column. */
export function triggerBody(run: BlockRun<InputFormatInput>): unknown {
  const trigger = run.trigger;
  if (trigger === null) throw new WorkflowError("BLOCK_FAILED", "a trigger runs only when the run starts from it");
  if (trigger.kind === "manual" && trigger.input === undefined) return valueColumn(run.input.inputFormat ?? []);
  return trigger.input;
}

/** How messages name the trigger: `trigger "API"`. */
export function triggerLabel(run: BlockRun<unknown>): string {
  return `trigger "${run.block.name}"`;
}
