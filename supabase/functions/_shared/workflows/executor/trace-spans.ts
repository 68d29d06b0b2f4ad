/**
 * Trace spans: one per block execution, and one per loop iteration or parallel branch holding that
 * iteration's block spans. Start times are wall-clock; durations come from the monotonic clock, so
 * a span's end is its start plus a duration that never runs backwards.
 */
import type { CompiledNode } from "./graph.ts";
import type { TraceSpan } from "../core/context.ts";
import type { Frame, Run } from "./run-state.ts";
import { budgetTrace } from "./trace-budget.ts";

/**
 * Opens the span of one block instance, started at `startedAt` (epoch ms), and appends it to its
 * frame's spans. The caller keeps its monotonic start for `closeSpan` (no object per span for that).
 */
export function openBlockSpan(node: CompiledNode, frame: Frame, startedAt: number): TraceSpan {
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
  return span;
}

/** Opens the span of one iteration (or branch), `Each #2`, whose children are the iteration frame's spans. */
export function openIterationSpan(container: CompiledNode, kind: "loop" | "parallel", index: number, frame: Frame, startedAt: number): TraceSpan {
  return {
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
}

/** Sets the span's duration (µs precision, from the monotonic `started`) and its end time. */
export function closeSpan(span: TraceSpan, startedAt: number, started: number): void {
  span.durationMs = Math.round((performance.now() - started) * 1000) / 1000;
  span.endedAt = new Date(startedAt + span.durationMs).toISOString();
}

/**
 * Hands a finished block span to the run's observer, secrets masked and kept to the trace's budget
 * (the span leaves the engine); the observer's failures never reach the run.
 */
export function notify(run: Run, span: TraceSpan): void {
  if (!run.onBlockComplete) return;
  try {
    run.onBlockComplete(budgetTrace([run.redactor.redact(span)])[0]);
  } catch {
    // An observer's failure must not change the run it observes.
  }
}
