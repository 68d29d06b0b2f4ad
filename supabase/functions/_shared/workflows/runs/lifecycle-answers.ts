/**
 * The JSON the lifecycle functions answer (docs/workflow-runs.md), as TypeScript types. The SQL is
 * ours and its answers are built by jsonb_build_object, so they are read as typed, not re-validated
 * on every request (that costs the hot path more than the call itself).
 */
import type { RunTrace } from "../tracing/trace-context.ts";
import type { Checkpoint } from "../executor/replay.ts";
import type { ValidationIssue } from "../state/issues.ts";

/** A bucket's state, for the X-RateLimit-* headers. */
export interface RateLimitState {
  limit: number;
  remaining: number;
  /** ISO time when the bucket is full again. */
  resetAt: string;
  isLimited: boolean;
  /** Seconds until the next token (0 when one is there). */
  retryAfter: number;
}

/** The billing account's usage in its open period. */
export interface UsageState {
  currentPeriodCost: number;
  limit: number;
  plan: string;
  isExceeded: boolean;
  periodEnd: string;
}

/** What a run executes and with which environment, as admit and claim return it. */
export interface RunPayload {
  executionId: string;
  runStatus: "queued" | "running";
  trigger: "manual" | "api" | "webhook" | "schedule" | "chat";
  /** The trigger block a webhook, schedule or chat run starts from (null: chosen by trigger kind). */
  triggerBlockId?: string | null;
  mode: "sync" | "async";
  attempt: number;
  leaseExpiresAt: string | null;
  /** An async run's input (kept in its record); null for sync runs. */
  input: unknown;
  /** The workflow, and the billing account its runs are charged to (absent from records made before it was recorded). */
  workflow: { id: string; name: string; workspaceId: string; billingAccountId?: string };
  /** The deployment it runs; `state` is left out when the caller said it caches it. */
  deployment: { id: string; version: number; state?: unknown } | null;
  /** A manual run's draft snapshot, with what the database's validator finds in it in deploy mode (a run with any issue is refused). */
  snapshot: { id: string; state: unknown; issues: ValidationIssue[] } | null;
  /** `variables` is left out when the caller holds `version`. */
  environment: { version: number; variables?: Record<string, string> };
  /**
   * A claimed async run's history from earlier attempts (executor/durable.ts), empty on a first
   * attempt; for a fromBlock re-run, its original's completed block instances; absent otherwise.
   */
  checkpoints?: Checkpoint[];
  /** A re-run's original run. */
  rerunOf?: string;
  /** The run's trace ids (docs/tracing.md); absent only from answers made before runs had them. */
  trace?: RunTrace;
  /** A fromBlock re-run's block (null for a whole re-run). */
  fromBlock?: string | null;
}

/** A refusal: the HTTP status and `{error, code}`, with what the headers need. */
export interface Refusal {
  status: number;
  outcome: "refused";
  code: string;
  error: string;
  retryAfter?: number;
  rateLimit?: RateLimitState | null;
  usage?: UsageState;
  executionId?: string;
  /** A run removed by retention (410 RUN_EXPIRED, docs/retention.md): when it expired, ISO. */
  expiredAt?: string;
  /** And the retention in days that applied. */
  retentionDays?: number;
  /** On a concurrency 429: the limit reached, and the flow-control key when it was the key's. */
  concurrency?: { limit: number; key?: string };
}

/** A repeated Idempotency-Key, answered from the first execution. */
export interface Replay {
  status: number;
  outcome: "replay";
  executionId: string;
  runStatus: string;
  mode: "sync" | "async";
  response: StoredResponse | null;
  output: unknown;
  error: { message: string; code: string | null; failedBlock: unknown } | null;
  createdAt: string;
}

/** What an endpoint answered, kept with the run for replays. */
export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** A sync run admitted: recorded as running, with everything it needs. */
export type AdmittedSync = RunPayload & { status: 200; outcome: "admitted"; createdAt: string; rateLimit: RateLimitState | null; usage: UsageState };

/** An async run admitted: recorded as queued and sent to the queue, or waiting for a concurrency slot. */
export interface AdmittedAsync {
  status: 202;
  outcome: "admitted";
  executionId: string;
  runStatus: "queued";
  createdAt: string;
  /** True when the account's concurrent runs are all taken: the run starts when one ends. */
  waiting: boolean;
  workflow: { id: string; name: string; workspaceId: string };
  rateLimit: RateLimitState | null;
  usage: UsageState;
}

/** Every answer of admit_workflow_run. */
export type AdmitAnswer = AdmittedSync | AdmittedAsync | Replay | Refusal;

/** The answer of the read functions (job status, usage limits, deployment status). */
export type ReadAnswer = { status: 200; outcome?: undefined; body: unknown } | Refusal;

/** park_workflow_run's answer: parked, or why not (a cancellation was requested; the attempt no longer holds the run). */
export interface ParkAnswer {
  parked: boolean;
  alive: boolean;
  resumeAt?: string;
  cancelRequested: boolean;
}

/** What heartbeat_workflow_run answers. */
export interface Heartbeat {
  alive: boolean;
  runStatus: string;
  attempt: number;
  cancelRequested: boolean;
}
