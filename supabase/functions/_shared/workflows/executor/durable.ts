/**
 * Durable runs (docs/workflow-runs.md, "Durable async runs"): what lets an async run survive its
 * worker and wait for days without holding one. The engine stays free of I/O: the caller hands it
 * a `Durability` — the run's history from earlier attempts and a way to record to it — and the
 * engine
 *
 *  - records each block instance as it completes (a checkpoint: its output, handled failure or not,
 *    its redacted trace span, the run's variables after it, the model calls it made), and starts the
 *    block's successors only once the record is written: a completed block is one whose checkpoint
 *    is committed;
 *  - on a later attempt, replays: a block instance found in the history returns its recorded
 *    outcome instead of running again, so scheduling, decisions, loop and parallel progress and the
 *    trace rebuild exactly, and the run continues from what was not done. A block that was running
 *    when the worker died has no checkpoint and runs again: at-least-once for the block in flight,
 *    exactly-once for completed ones;
 *  - parks: a Wait whose due time is further off than `parkAfterMs` (or past what is left of the
 *    attempt's time) records a timer and ends the attempt with status `parked`; the caller persists
 *    that and resumes the run at the due time, when the timer replays as a (short or zero) sleep;
 *  - waits for people: an approval block opens its approval through the Durability's desk and parks
 *    until the approval's timeout, as a long Wait would (a sync run too: its request answers paused
 *    and hands the run to the async path); a decision wakes the run earlier, and the block, run
 *    again, finds the decision and returns it.
 *
 * Loops and parallels are not checkpointed themselves: their bodies' blocks are, under keys that
 * name the iteration (`fn1[loop1:2]`), so a resumed container re-enters and replays what it finished.
 * A synchronous run's Durability only collects its checkpoints in memory (runs/collected-outcomes.ts)
 * and parks only at an approval: it pays no round trip per block. The history's shapes and its index are
 * replay.ts, which the run's state holds without importing this file.
 */
import type { ApprovalOutcome, ApprovalRequest } from "../core/approvals.ts";
import type { BlockOutput, TraceSpan } from "../core/context.ts";
import { type BlockIdentity, WorkflowError } from "../core/errors.ts";
import type { ModelUsage } from "../outbound/model-cost.ts";
import type { CompiledNode } from "./graph.ts";
import { type Replay, RunParked } from "./replay.ts";
import type { Frame, Run } from "./run-state.ts";

/** How far ahead of the attempt's deadline a Wait parks rather than sleeps, so the attempt can still end cleanly. */
const DEADLINE_MARGIN_MS = 2_000;

/** The key of a block instance: its id plus its frame's iteration path. */
export function instanceKey(node: CompiledNode, frame: Frame): string {
  return `${node.id}${frame.key}`;
}

/** Ends the attempt at block instance `key` until `dueAt` (epoch ms), recording its timer the first time. */
async function park(replay: Replay, run: Run, key: string, dueAt: number): Promise<never> {
  if (replay.timerOf(key) === undefined) await replay.durability.record({ kind: "timer", key, dueAt });
  const parked = new RunParked(dueAt);
  run.cancellation.abort(parked);
  throw parked;
}

/**
 * A block's pause (BlockRun.pause): sleeps until `ms` after the instance first asked — in a durable
 * run, parks instead when that is further off than the park threshold or past the attempt's time.
 * A resumed run finds the instance's timer and sleeps only what is left of it.
 */
export async function pauseBlock(run: Run, key: string, ms: number, signal: AbortSignal): Promise<void> {
  const replay = run.replay;
  const now = run.services.clock.now();
  const dueAt = replay?.timerOf(key) ?? now + ms;
  const left = dueAt - now;
  const parkAfter = replay?.durability.parkAfterMs ?? null;
  if (replay && parkAfter !== null && (left > parkAfter || dueAt > run.deadline - DEADLINE_MARGIN_MS)) await park(replay, run, key, dueAt);
  if (left > 0) await run.services.clock.sleep(left, signal);
}

/**
 * An approval block's wait (BlockRun.awaitApproval): opens the instance's approval (or finds it, on
 * a resumed run) and, while it is undecided, parks the run until its timeout, whatever the run's
 * park threshold: a sync run's request is then answered paused and its run handed to the async path
 * (api/paused-answer.ts). A decision wakes the run earlier; the timeout decides when it resumes.
 */
export async function awaitApproval(run: Run, key: string, block: BlockIdentity, request: ApprovalRequest): Promise<ApprovalOutcome> {
  const replay = run.replay;
  const desk = replay?.durability.approvals;
  if (!replay || !desk) {
    throw new WorkflowError("BLOCK_FAILED", "an approval waits for people, which a manual or chat run cannot do: run the deployed workflow through its API (execute, sync, streamed or async)");
  }
  const state = await desk.open(key, { id: block.id, name: block.name }, request);
  if (state.decided) return state.output;
  return await park(replay, run, key, Date.parse(state.expiresAt));
}

/** Records a completed block instance (a no-op in a run without durability). */
export function recordCompletion(run: Run, key: string, output: BlockOutput, failed: boolean, span: TraceSpan, modelUsage: ModelUsage[]): Promise<void> | undefined {
  if (!run.replay) return undefined;
  return run.replay.durability.record({
    kind: "completed", key, output, failed, span: run.redactor.redact(span), variables: Object.fromEntries(run.variables), modelUsage,
  });
}
