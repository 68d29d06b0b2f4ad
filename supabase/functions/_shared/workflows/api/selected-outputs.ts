/**
 * `selectedOutputs`: which block outputs an execute request wants, as `blockName.attribute` entries
 * (the spec's form; names compared as references compare them: case-insensitive, spaces ignored,
 * so `"Send Email.status"` names the block "send email"; deeper paths such as `fn.result.items[0]`
 * work too). Each entry must name a block of the deployed workflow, else the request is a 400.
 */
import type { TraceSpan } from "../core/context.ts";
import type { CompiledWorkflow } from "../executor/graph.ts";
import { getPath, parseTemplate, type PathSegment } from "../core/references.ts";

/** One resolved entry: as the client wrote it, the block it names and the path inside its output. */
export interface SelectedOutput {
  entry: string;
  blockId: string;
  path: readonly PathSegment[];
}

/** The entries of a request, resolved, or the first entry that names no block (with why). */
export function resolveSelectedOutputs(compiled: CompiledWorkflow, entries: readonly string[]): { ok: true; selected: SelectedOutput[] } | { ok: false; entry: string; reason: string } {
  const selected: SelectedOutput[] = [];
  for (const entry of entries) {
    const parts = parseTemplate(`<${entry.replace(/\s+/g, "")}>`);
    const [token] = parts;
    if (parts.length !== 1 || token.kind !== "ref") return { ok: false, entry, reason: "it is not of the form blockName.attribute" };
    const node = compiled.byName.get(token.head);
    if (!node) return { ok: false, entry, reason: `the workflow has no block named "${token.head}"` };
    selected.push({ entry, blockId: node.id, path: token.path });
  }
  return { ok: true, selected };
}

/** The value an entry selects from a block's output, or undefined when the output lacks it. */
export function selectedValue(selection: SelectedOutput, output: unknown): unknown {
  const lookup = getPath(output, selection.path);
  return lookup.found ? lookup.value : undefined;
}

/** The run's output as selected: `{"<entry>": value}` per entry (null for a block that did not run). */
export function selectedOutput(selected: readonly SelectedOutput[], spans: readonly TraceSpan[]): Record<string, unknown> {
  const outputs = new Map<string, unknown>();
  for (const span of spans) if (span.status === "success") outputs.set(span.blockId, span.output);
  return Object.fromEntries(selected.map((selection) => [selection.entry, outputs.has(selection.blockId) ? selectedValue(selection, outputs.get(selection.blockId)) ?? null : null]));
}

/** A selected value as chunk text: strings as they are, anything else as pretty-printed JSON. */
export function chunkText(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value ?? null, null, 2);
}
