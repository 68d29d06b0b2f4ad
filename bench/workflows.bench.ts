/**
 * Executor benchmarks, in process (no stack needed): the orchestration overhead per block, a
 * 40-block chain (also with secrets to mask in its result) and a 20-branch parallel, each end to
 * end. scripts/bench.ts calls `run()`.
 * Sim publishes no such figures (reference §11); these are reproducible ones.
 */
import { compileWorkflow } from "../supabase/functions/_shared/workflows/executor/execute.ts";
import { runWorkflow } from "../supabase/functions/_shared/workflows/runs/run-workflow.ts";
import { WorkflowBuilder } from "../supabase/functions/_shared/workflows/state/state-builder.ts";
import type { WorkflowState } from "../supabase/functions/_shared/workflows/state/state-schema.ts";
import { report } from "./bench-support.ts";

/** The per-block overhead the issue allows, in microseconds. */
const OVERHEAD_BUDGET_US = 50;

/** A trigger followed by `length` blocks of `type`, each after the previous one. */
function chain(length: number, type: "variables" | "function"): WorkflowState {
  const builder = new WorkflowBuilder().block("start", "manual_trigger", {}, { name: "Start" });
  const ids = ["start"];
  for (let index = 1; index <= length; index++) {
    const id = `b${index}`;
    builder.block(id, type, type === "variables" ? { assignments: [] } : { code: `return ${index};` });
    ids.push(id);
  }
  return builder.chain(...ids).build();
}

/** A trigger and a parallel of `branches` branches, each running one Function block. */
function fanOut(branches: number): WorkflowState {
  return new WorkflowBuilder()
    .block("start", "manual_trigger", {}, { name: "Start" })
    .parallel("fan", { nodes: ["work"], parallelType: "count", count: branches }, { name: "Fan" })
    .block("work", "function", { code: "return <parallel.index> * 2;" }, { name: "Work" })
    .edge("start", "fan")
    .edge("fan", "work", "parallel-start")
    .build();
}

interface Stats {
  p50: number;
  p95: number;
  mean: number;
}

function stats(samples: number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (quantile: number) => sorted[Math.min(sorted.length - 1, Math.floor(quantile * sorted.length))];
  return { p50: at(0.5), p95: at(0.95), mean: samples.reduce((sum, value) => sum + value, 0) / samples.length };
}

/** Times `iterations` runs of `task` after `warmup` untimed ones; milliseconds per run. */
async function measure(task: () => Promise<unknown>, iterations: number, warmup: number): Promise<Stats> {
  for (let index = 0; index < warmup; index++) await task();
  const samples: number[] = [];
  for (let index = 0; index < iterations; index++) {
    const started = performance.now();
    await task();
    samples.push(performance.now() - started);
  }
  return stats(samples);
}

function row(label: string, value: Stats, unit = "ms"): string {
  const format = (number: number) => number.toFixed(unit === "ms" ? 3 : 1).padStart(9);
  return `  ${label.padEnd(48)} p50 ${format(value.p50)} ${unit}   p95 ${format(value.p95)} ${unit}   mean ${format(value.mean)} ${unit}`;
}

async function expectSuccess(promise: ReturnType<typeof runWorkflow>): Promise<void> {
  const result = await promise;
  if (!result.success) throw new Error(`benchmark workflow failed: ${result.error?.message}`);
}

/** Runs every workflow benchmark and prints its figures. */
export async function run(): Promise<void> {
  const manual = { kind: "manual" as const };
  console.log("Workflow executor (in process)");

  const noopBlocks = 200;
  const noop = compileWorkflow(chain(noopBlocks, "variables"));
  const overhead = await measure(() => expectSuccess(runWorkflow({ workflow: noop, trigger: manual })), 300, 50);
  const perBlock: Stats = { p50: (overhead.p50 * 1000) / (noopBlocks + 1), p95: (overhead.p95 * 1000) / (noopBlocks + 1), mean: (overhead.mean * 1000) / (noopBlocks + 1) };
  console.log(row(`overhead per no-op block (${noopBlocks}-block chain)`, perBlock, "µs"));
  console.log(`  ${"budget".padEnd(48)} ${OVERHEAD_BUDGET_US} µs per block: ${perBlock.p50 <= OVERHEAD_BUDGET_US ? "met" : "NOT MET"}`);
  report({
    bench: "workflows", metric: `executor overhead per no-op block (${noopBlocks}-block chain), p50`, scale: "in process", value: perBlock.p50, unit: "µs", higherIsBetter: false,
    goal: { text: `≤ ${OVERHEAD_BUDGET_US} µs`, met: perBlock.p50 <= OVERHEAD_BUDGET_US },
  });

  const chain40 = chain(40, "variables");
  console.log(row("40-block chain, no-op blocks, from JSON", await measure(() => expectSuccess(runWorkflow({ workflow: chain40, trigger: manual })), 300, 30)));
  const compiled40 = compileWorkflow(chain40);
  console.log(row("40-block chain, no-op blocks, precompiled", await measure(() => expectSuccess(runWorkflow({ workflow: compiled40, trigger: manual })), 300, 30)));
  // The same run with environment values, so everything it returns is copied with secrets masked.
  const env = { API_TOKEN: "sk_live_0123456789abcdef", PASSWORD: "correct horse battery", REGION: "eu-west", RATE: "0.18", DEBUG: "1" };
  console.log(row("40-block chain, precompiled, 5 secrets masked", await measure(() => expectSuccess(runWorkflow({ workflow: compiled40, trigger: manual, env })), 300, 30)));
  const functions40 = chain(40, "function");
  console.log(row("40-block chain, Function blocks (sandboxed)", await measure(() => expectSuccess(runWorkflow({ workflow: functions40, trigger: manual })), 40, 5)));

  const parallel20 = fanOut(20);
  console.log(row("20-branch parallel, Function per branch", await measure(() => expectSuccess(runWorkflow({ workflow: parallel20, trigger: manual })), 40, 5)));
}
