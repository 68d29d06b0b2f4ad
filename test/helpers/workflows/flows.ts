/**
 * Helpers for the executor's unit tests: a workflow that starts from a manual trigger, a run of it,
 * spans by name, and Wait blocks gated by the test so scheduling can be asserted without timing.
 */
import type { BlockHandler } from "../../../supabase/functions/_shared/workflows/core/block-handler.ts";
import { WorkflowBuilder } from "../../../supabase/functions/_shared/workflows/state/state-builder.ts";
import type { TraceSpan } from "../../../supabase/functions/_shared/workflows/core/context.ts";
import { runWorkflow, type RunWorkflowOptions } from "../../../supabase/functions/_shared/workflows/runs/run-workflow.ts";

/** A manual trigger plus whatever the test adds. */
export function flow(): WorkflowBuilder {
  return new WorkflowBuilder().block("start", "manual_trigger", {}, { name: "Start" });
}

/** Runs the builder's state from a manual trigger. */
export function run(builder: WorkflowBuilder, options: Partial<RunWorkflowOptions> = {}) {
  return runWorkflow({ workflow: builder.build(), trigger: { kind: "manual" }, ...options });
}

/** Flattens spans (iterations included) into `name` → spans. */
export function spansByName(spans: TraceSpan[], out = new Map<string, TraceSpan[]>()): Map<string, TraceSpan[]> {
  for (const span of spans) {
    out.set(span.name, [...(out.get(span.name) ?? []), span]);
    if (span.children) spansByName(span.children, out);
  }
  return out;
}

/**
 * Replaces the `wait` handler with gates the test opens by block id, logging starts and ends, so
 * scheduling order can be asserted without timing.
 */
export function gatedWaits() {
  const log: string[] = [];
  const gates = new Map<string, () => void>();
  const started = new Map<string, number>();
  let inFlight = 0;
  let maxInFlight = 0;
  const handler: BlockHandler<unknown> = {
    timeoutMs: () => 10_000,
    execute(blockRun) {
      // Repeated instances (iterations, branches) get `id#n` keys.
      const count = started.get(blockRun.block.id) ?? 0;
      started.set(blockRun.block.id, count + 1);
      const key = count === 0 ? blockRun.block.id : `${blockRun.block.id}#${count}`;
      log.push(`start ${key}`);
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      return new Promise((resolve) => {
        gates.set(key, () => {
          inFlight--;
          log.push(`end ${key}`);
          resolve({ done: key });
        });
      });
    },
  };
  const open = async (key: string) => {
    for (let attempt = 0; attempt < 100 && !gates.has(key); attempt++) await new Promise((resolve) => setTimeout(resolve, 1));
    const gate = gates.get(key);
    if (!gate) throw new Error(`${key} never started; log: ${log.join(", ")}`);
    gates.delete(key);
    gate();
    await new Promise((resolve) => setTimeout(resolve, 1));
  };
  return { log, open, handlers: { wait: handler }, maxInFlight: () => maxInFlight, waiting: () => [...gates.keys()] };
}

/** A Wait config of `ms` milliseconds. */
export const wait = (ms = 0) => ({ amount: ms, unit: "ms" });
/** A Function config. */
export const fn = (code: string, extra: Record<string, unknown> = {}) => ({ code, ...extra });
/** A Condition config: `yes` when the expression holds, else `no`. */
export const ifElse = (expression: string) => ({ conditions: [{ id: "yes", kind: "if", expression }, { id: "no", kind: "else" }] });
