/**
 * Trace spans: one per block execution, and one per loop iteration or parallel branch holding that
 * iteration's block spans. Start times are wall-clock; durations come from the monotonic clock, so
 * a span's end is its start plus a duration that never runs backwards.
 */
import type { CompiledNode } from "./graph.ts";
import type { TraceSpan } from "./context.ts";
import type { Frame, Run } from "./run-state.ts";

/** A span being timed: the span, its wall-clock start and its monotonic start. */
export interface OpenSpan {
  span: TraceSpan;
  startedAt: number;
  started: number;
}

/** Opens the span of one block instance and appends it to its frame's spans. */
export function openBlockSpan(node: CompiledNode, frame: Frame): OpenSpan {
  const startedAt = Date.now();
  const started = performance.now();
  const span: TraceSpan = {
    id: `${node.id}${frame.key}`,
    blockId: node.id,
    name: node.identity.name,
    type: node.type,
    status: "success",
    startedAt: new Date(startedAt).toISOString(),
    endedAt: "",
    durationMs: 0,
  };
  if (frame.iteration) span.iteration = { containerId: frame.iteration.container.id, kind: frame.iteration.kind, index: frame.iteration.index };
  frame.spans.push(span);
  return { span, startedAt, started };
}

/** Opens the span of one iteration (or branch), `Each #2`, whose children are the iteration frame's spans. */
export function openIterationSpan(container: CompiledNode, kind: "loop" | "parallel", index: number, frame: Frame): OpenSpan {
  const startedAt = Date.now();
  const started = performance.now();
  const span: TraceSpan = {
    id: `${container.id}${frame.key}`,
    blockId: container.id,
    name: `${container.identity.name} #${index}`,
    type: kind === "loop" ? "loop-iteration" : "parallel-branch",
    status: "success",
    startedAt: new Date(startedAt).toISOString(),
    endedAt: "",
    durationMs: 0,
    iteration: { containerId: container.id, kind, index },
    children: frame.spans,
  };
  return { span, startedAt, started };
}

/** Sets the span's duration (µs precision) and end time. */
export function closeSpan(open: OpenSpan): void {
  open.span.durationMs = Math.round((performance.now() - open.started) * 1000) / 1000;
  open.span.endedAt = new Date(open.startedAt + open.span.durationMs).toISOString();
}

/**
 * Hands a finished block span to the run's observer, secrets masked (the span leaves the engine);
 * the observer's failures never reach the run.
 */
export function notify(run: Run, span: TraceSpan): void {
  if (!run.onBlockComplete) return;
  try {
    run.onBlockComplete(run.redactor.redact(span));
  } catch {
    // An observer's failure must not change the run it observes.
  }
}
