/**
 * Keeps what a run reports about itself (trace spans, the execution context) to a budget, as Sim
 * shrinks large values: a span's input or output, and a block output or variable in the context,
 * longer than MAX_TRACE_VALUE_CHARS becomes a marker holding its size and the start of its JSON;
 * and once the spans together pass MAX_TRACE_CHARS, the rest are cut, the deepest first, with a
 * note saying how many (see budgetTrace). The run's own answer (its output, the Response) is never shortened. Works on
 * copies: the run's own spans stay whole. Runs after secret masking, so a preview never shows a
 * secret cut in half.
 */
import type { ExecutionSnapshot, TraceSpan } from "../core/context.ts";
import { jsonLength, jsonPrefix } from "../core/json-size.ts";
import { MAX_TRACE_CHARS, MAX_TRACE_VALUE_CHARS, TRACE_PREVIEW_CHARS } from "../core/limits.ts";

/** What stands in for a value too long to report. */
export interface ShortenedValue {
  __truncated: true;
  /** Length of the value's JSON text. */
  chars: number;
  /** The first characters of that text. */
  preview: string;
}

/**
 * The value, or a marker when its JSON is longer than the trace's budget per value. `sizes` is a
 * cache of sizes measured already (the run's, where outputs were measured for their budget).
 */
export function shortenValue(value: unknown, sizes?: WeakMap<object, number>): unknown {
  const small = typeof value === "string" ? value.length <= MAX_TRACE_VALUE_CHARS : value === null || typeof value !== "object";
  if (small) return value;
  if (jsonLength(value, MAX_TRACE_VALUE_CHARS, sizes) <= MAX_TRACE_VALUE_CHARS) return value;
  const marker: ShortenedValue = { __truncated: true, chars: jsonLength(value), preview: jsonPrefix(value, TRACE_PREVIEW_CHARS) };
  return marker;
}

function countSpans(span: TraceSpan): number {
  let count = 1;
  for (const child of span.children ?? []) count += countSpans(child);
  return count;
}

/** JSON kept back for the `,"cut":{"spans":N}` a span with children may need. */
const CUT_NOTE_CHARS = 32;
/** `,"children":[]` around a span's children. */
const CHILDREN_CHARS = 14;

/** The span that ends the top-level list when top-level spans themselves are cut. */
function cutMarker(last: TraceSpan | undefined, count: number): TraceSpan {
  const at = last?.endedAt ?? new Date(0).toISOString();
  return {
    id: "run:cut",
    blockId: "",
    name: `${count.toLocaleString("en")} more span${count === 1 ? "" : "s"} cut: the trace passed its budget of ${MAX_TRACE_CHARS.toLocaleString("en")} characters`,
    type: "truncated",
    status: "success",
    startedAt: at,
    endedAt: at,
    durationMs: 0,
    cut: { spans: count },
  };
}

/** The marker span's JSON, kept back from the start. */
const CUT_MARKER_CHARS = jsonLength(cutMarker({ endedAt: new Date(0).toISOString() } as TraceSpan, 1_000_000_000));

/** A span waiting its turn: where its copy goes, and the copy of its parent (null at the top). */
interface Pending {
  span: TraceSpan;
  into: TraceSpan[];
  parent: TraceSpan | null;
}

/**
 * The spans within the trace's budget: values shortened, and the spans past the budget cut. Spans
 * are taken level by level (the top-level blocks first, then the iterations of loops and
 * parallels, then the blocks inside them), so the outline of a run survives and the details past
 * the budget are what is cut. A kept span that lost descendants says how many in `cut`; when
 * top-level spans themselves are cut, a last `truncated` span says how many. The room those notes
 * take is kept back as spans are taken, so the result stays within the budget.
 */
export function budgetTrace(spans: readonly TraceSpan[], sizes: WeakMap<object, number> = new WeakMap()): TraceSpan[] {
  const top: TraceSpan[] = [];
  let topCut = 0;
  let used = 2 + CUT_MARKER_CHARS;
  let exhausted = false;
  let level: Pending[] = spans.map((span) => ({ span, into: top, parent: null }));
  while (level.length > 0) {
    const next: Pending[] = [];
    for (const { span, into, parent } of level) {
      if (!exhausted) {
        const { children, ...own } = span;
        if ("input" in own) own.input = shortenValue(own.input, sizes);
        if ("output" in own) own.output = shortenValue(own.output, sizes);
        // The span's own JSON, the comma before it, and its `"children":[]` with room for a cut note.
        const size = jsonLength(own, MAX_TRACE_CHARS - used, sizes) + 1 + (children ? CHILDREN_CHARS + (children.length > 0 ? CUT_NOTE_CHARS : 0) : 0);
        if (used + size <= MAX_TRACE_CHARS) {
          used += size;
          const copy: TraceSpan = own;
          into.push(copy);
          if (children) {
            copy.children = [];
            for (const child of children) next.push({ span: child, into: copy.children, parent: copy });
          }
          continue;
        }
        exhausted = true;
      }
      if (parent) parent.cut = { spans: (parent.cut?.spans ?? 0) + countSpans(span) };
      else topCut += countSpans(span);
    }
    level = next;
  }
  if (topCut > 0) top.push(cutMarker(top.at(-1), topCut));
  return top;
}

/** The execution context with its block outputs and variables shortened like span values. */
export function budgetContext(context: ExecutionSnapshot, sizes: WeakMap<object, number> = new WeakMap()): ExecutionSnapshot {
  const blockStates: ExecutionSnapshot["blockStates"] = {};
  for (const [id, state] of Object.entries(context.blockStates)) {
    blockStates[id] = "output" in state ? { ...state, output: shortenValue(state.output, sizes) as typeof state.output } : state;
  }
  const variables: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(context.variables)) variables[name] = shortenValue(value, sizes);
  return { ...context, blockStates, variables };
}
