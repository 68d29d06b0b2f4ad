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
 *    that and resumes the run at the due time, when the timer replays as a (short or zero) sleep.
 *
 * Loops and parallels are not checkpointed themselves: their bodies' blocks are, under keys that
 * name the iteration (`fn1[loop1:2]`), so a resumed container re-enters and replays what it finished.
 * Synchronous runs have no Durability and pay nothing for any of this.
 */
import type { BlockOutput, ModelUsage, TraceSpan } from "../core/context.ts";
import type { CompiledNode } from "./graph.ts";
import type { Frame, Run } from "./run-state.ts";

/** The longest a Wait may pause in a run that can park (an async run): 30 days. */
export const MAX_DURABLE_WAIT_MS = 30 * 24 * 60 * 60_000;

/** How far ahead of the attempt's deadline a Wait parks rather than sleeps, so the attempt can still end cleanly. */
const DEADLINE_MARGIN_MS = 2_000;

/** A block instance that completed in an earlier attempt. */
export interface CompletedCheckpoint {
  kind: "completed";
  /** The block instance: its id plus its iteration path (`fn1[loop1:2]`), as trace spans name it. */
  key: string;
  output: BlockOutput;
  /** True when it failed and an `error` edge took over. */
  failed: boolean;
  /** Its trace span, secrets masked. */
  span: TraceSpan;
  /** The run's variables after it completed. */
  variables: Record<string, unknown>;
  /** The model calls it made (charged once, when the run finishes). */
  modelUsage: ModelUsage[];
}

/** A Wait that parked the run: when it is due (epoch ms). */
export interface TimerCheckpoint {
  kind: "timer";
  key: string;
  dueAt: number;
}

/** One entry of a run's history. */
export type Checkpoint = CompletedCheckpoint | TimerCheckpoint;

/** What makes a run durable: given by the async worker, never by the synchronous endpoints. */
export interface Durability {
  /** The run's history from earlier attempts, in the order it was recorded. */
  history: readonly Checkpoint[];
  /** Persists a checkpoint; the run goes on only once it resolves. A rejection stops the run. */
  record(checkpoint: Checkpoint): Promise<void>;
  /** Waits longer than this park the run instead of sleeping. */
  parkAfterMs: number;
}

/** The run's abort reason when it parks: ends the attempt, successfully, until `resumeAt`. */
export class RunParked {
  readonly reason = "run parked";
  constructor(readonly resumeAt: number) {}
}

/** A Durability's history, indexed for replay. */
export class Replay {
  private readonly completed = new Map<string, CompletedCheckpoint>();
  private readonly timers = new Map<string, number>();
  /** The variables after the last recorded completion: where a resumed run's variables start. */
  readonly variables: Record<string, unknown> | null = null;

  constructor(readonly durability: Durability) {
    for (const checkpoint of durability.history) {
      if (checkpoint.kind === "timer") this.timers.set(checkpoint.key, checkpoint.dueAt);
      else {
        this.completed.set(checkpoint.key, checkpoint);
        this.variables = checkpoint.variables;
      }
    }
  }

  completedOf(key: string): CompletedCheckpoint | undefined {
    return this.completed.get(key);
  }

  timerOf(key: string): number | undefined {
    return this.timers.get(key);
  }
}

/** The key of a block instance: its id plus its frame's iteration path. */
export function instanceKey(node: CompiledNode, frame: Frame): string {
  return `${node.id}${frame.key}`;
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
  if (replay && (left > replay.durability.parkAfterMs || dueAt > run.deadline - DEADLINE_MARGIN_MS)) {
    if (replay.timerOf(key) === undefined) await replay.durability.record({ kind: "timer", key, dueAt });
    const parked = new RunParked(dueAt);
    run.cancellation.abort(parked);
    throw parked;
  }
  if (left > 0) await run.services.clock.sleep(left, signal);
}

/** Records a completed block instance (a no-op in a run without durability). */
export function recordCompletion(run: Run, key: string, output: BlockOutput, failed: boolean, span: TraceSpan, modelUsage: ModelUsage[]): Promise<void> | undefined {
  if (!run.replay) return undefined;
  return run.replay.durability.record({
    kind: "completed", key, output, failed, span: run.redactor.redact(span), variables: Object.fromEntries(run.variables), modelUsage,
  });
}
