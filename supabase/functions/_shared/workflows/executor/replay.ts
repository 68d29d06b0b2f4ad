/**
 * A durable run's history (durable.ts says how runs use it): the checkpoints an async run records,
 * what the async worker hands the executor to make a run durable, and the history indexed for
 * replay. It imports nothing of the executor, so the run's state (run-state.ts) can hold a Replay
 * while durable.ts, which works on that state, imports both without a circle.
 */
import type { ApprovalDesk } from "../core/approvals.ts";
import type { BlockOutput, TraceSpan } from "../core/context.ts";
import type { ModelUsage } from "../outbound/model-cost.ts";

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

/**
 * What makes a run durable: the async worker gives one that records to the database as the run goes
 * (runs/durable-run.ts); a sync run one that collects its outcomes in memory for one write at its end
 * (runs/collected-outcomes.ts), and a re-run from a block replays its original's outcomes through it.
 */
export interface Durability {
  /** The run's history from earlier attempts, in the order it was recorded. */
  history: readonly Checkpoint[];
  /** Persists a checkpoint; the run goes on only once it resolves. A rejection stops the run. */
  record(checkpoint: Checkpoint): Promise<void>;
  /**
   * Waits longer than this park the run instead of sleeping; null for a run that never parks (a sync
   * run: its Waits sleep, and a block sees `durable: false`).
   */
  parkAfterMs: number | null;
  /** Where the run's approval blocks keep their approvals; without it, an approval block fails. */
  approvals?: ApprovalDesk;
  /**
   * Called once when the run has ended (or parked), with the run's final masking: what a Durability
   * keeps past the run's end is kept masked, as its trace is (outputs and variables are recorded
   * unmasked, since the blocks after them must see what they saw).
   */
  close?(mask: <T>(value: T) => T): void;
}

/**
 * A Durability that also keeps its whole history in memory (the one it was given, then what it
 * recorded), masked once the run has ended: what the run's finish stores for re-runs.
 */
export interface KeptDurability extends Durability {
  readonly kept: readonly Checkpoint[];
  close(mask: <T>(value: T) => T): void;
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

  /** The recorded completion of a block instance, when an earlier attempt finished it. */
  completedOf(key: string): CompletedCheckpoint | undefined {
    return this.completed.get(key);
  }

  /** When a block instance's parked Wait is due, when an earlier attempt recorded one. */
  timerOf(key: string): number | undefined {
    return this.timers.get(key);
  }
}
