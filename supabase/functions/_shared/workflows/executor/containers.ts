/**
 * Loops and parallels. A container's body is a scope of its own, run once per iteration (a loop,
 * one after the other) or per branch (a parallel, in a sliding window of at most 20 at once), each
 * in a fresh frame holding that iteration's outputs. Results come back as an array, one entry per
 * iteration, in order. Counts above the cap fail loudly (LIMIT_EXCEEDED) instead of stopping short.
 */
import { chargeIterations } from "./budgets.ts";
import { Cancellation } from "./cancellation.ts";
import type { BlockOutput, TraceSpan } from "../core/context.ts";
import { BlockError, WorkflowError } from "../core/errors.ts";
import type { CompiledNode } from "./graph.ts";
import { MAX_CONCURRENT_BRANCHES, MAX_ITERATIONS } from "../core/limits.ts";
import { newFrame, type Frame, type Run, type ScopeRunner } from "./run-state.ts";
import { closeSpan, openIterationSpan } from "./trace-spans.ts";
import { asRecord, preview } from "../core/values.ts";

/** Reads a count (`for`, `count`) or a collection (`forEach`, `collection`) from resolved settings. */
export function iterationsOf(node: CompiledNode, settings: Record<string, unknown>): { count: number; items: unknown[] | null } {
  const subflow = node.subflow as NonNullable<CompiledNode["subflow"]>;
  const noun = subflow.kind === "loop" ? "iterations" : "branches";
  const cap = (count: number) => {
    if (count > MAX_ITERATIONS) throw new WorkflowError("LIMIT_EXCEEDED", `asks for ${count} ${noun}; a ${subflow.kind} may have at most ${MAX_ITERATIONS.toLocaleString("en")}`);
    return count;
  };
  if (subflow.mode === "for" || subflow.mode === "count") {
    const field = subflow.mode === "for" ? "iterations" : "count";
    const raw = settings[field];
    const count = typeof raw === "string" && raw.trim() !== "" ? Number(raw) : raw;
    if (typeof count !== "number" || !Number.isInteger(count) || count < 0) throw new WorkflowError("BLOCK_FAILED", `${field} must be a whole number of at least 0 (got ${preview(raw)})`);
    return { count: cap(count), items: null };
  }
  const field = subflow.mode === "forEach" ? "forEachItems" : "distribution";
  let raw = settings[field];
  if (typeof raw === "string") {
    try {
      raw = JSON.parse(raw);
    } catch {
      throw new WorkflowError("BLOCK_FAILED", `${field} must be an array or object, or JSON text of one (got ${preview(raw)})`);
    }
  }
  let items: unknown[];
  if (Array.isArray(raw)) items = raw;
  else if (raw !== null && typeof raw === "object") items = Object.entries(raw).map(([key, value]) => ({ key, value }));
  else throw new WorkflowError("BLOCK_FAILED", `${field} must be an array or object (got ${preview(raw)})`);
  return { count: cap(items.length), items };
}

/** Adds the iteration to a body failure's message: `… (in iteration 2 of loop "Each")` (counting from 0). */
function within(error: unknown, node: CompiledNode, index: number): unknown {
  if (!(error instanceof BlockError)) return error;
  const kind = node.subflow?.kind === "loop" ? "iteration" : "branch";
  return new BlockError(error.code, `${error.message} (in ${kind} ${index} of ${node.subflow?.kind} "${node.identity.name}")`, error.block, { cause: error });
}

/** Runs a parallel's branches in a sliding window of 20; the first failure cancels the others. */
async function runBranches(count: number, runOne: (index: number, branch: Cancellation) => Promise<void>, cancellation: Cancellation, results: unknown[]): Promise<BlockOutput> {
  const branches = new Cancellation(cancellation);
  let next = 0;
  let failure: { error: unknown } | null = null;
  const worker = async (): Promise<void> => {
    while (failure === null && next < count) {
      const index = next++;
      try {
        await runOne(index, branches);
      } catch (error) {
        if (failure === null) {
          failure = { error };
          branches.abort(error);
        }
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(MAX_CONCURRENT_BRANCHES, count) }, worker));
  } finally {
    branches.release();
  }
  if (failure !== null) throw cancellation.aborted ? cancellation.reason : (failure as { error: unknown }).error;
  return { results, branches: count };
}

/**
 * Runs a loop or parallel block whose settings resolved to `input`: its body once per iteration or
 * branch, through `runScope`. Records progress in the run and one child span per iteration.
 */
export async function runContainer(run: Run, node: CompiledNode, frame: Frame, input: unknown, cancellation: Cancellation, span: TraceSpan, runScope: ScopeRunner): Promise<BlockOutput> {
  const subflow = node.subflow as NonNullable<CompiledNode["subflow"]>;
  const { count, items } = iterationsOf(node, asRecord(input) ?? {});
  chargeIterations(run, node, count);
  const progress = { kind: subflow.kind, total: count, completed: 0 };
  run.subflows[`${node.id}${frame.key}`] = progress;
  const results: unknown[] = new Array(count).fill(null);
  const children: TraceSpan[] = new Array(count);
  span.children = children;

  const runOne = async (index: number, branch: Cancellation): Promise<void> => {
    const child = newFrame(frame, node.id, { container: node, kind: subflow.kind, index, item: items ? items[index] : index, items });
    const startedAt = Date.now();
    const started = performance.now();
    const iterationSpan = openIterationSpan(node, subflow.kind, index, child, startedAt);
    children[index] = iterationSpan;
    try {
      await runScope(run, subflow.body, child, subflow.plan, branch);
      results[index] = child.final ?? child.last;
      progress.completed++;
    } catch (error) {
      iterationSpan.status = branch.aborted ? "cancelled" : "error";
      throw within(error, node, index);
    } finally {
      closeSpan(iterationSpan, startedAt, started);
    }
  };

  try {
    if (subflow.kind === "loop") {
      for (let index = 0; index < count; index++) await runOne(index, cancellation);
      return { results, iterations: count };
    }
    return await runBranches(count, runOne, cancellation, results);
  } finally {
    // After a failure, iterations that never started have no span.
    span.children = children.filter((child) => child !== undefined);
  }
}
