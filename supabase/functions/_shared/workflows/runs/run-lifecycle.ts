/**
 * A run's steps around the executor, shared by every way in (the execute endpoint, its stream, the
 * manual run, the async worker): read what admit or claim handed over into a compiled workflow
 * and an environment (through the instance's cache), and record how the run ended with
 * finish_workflow_run, which also prices and charges its model usage. The SQL decides everything
 * else (docs/workflow-runs.md).
 */
import type { ExecutionResult, TriggerKind, TriggerRequest, UserFile } from "../core/context.ts";
import type { ModelUsage } from "../outbound/model-cost.ts";
import type { CompiledWorkflow } from "../executor/graph.ts";
import type { BlockIdentity, WorkflowErrorCode } from "../core/errors.ts";
import type { Checkpoint } from "../executor/replay.ts";
import type { RunPayload, StoredResponse } from "./lifecycle-answers.ts";
import type { RunCache } from "./run-cache.ts";
import { isDatabaseUnavailable, type ServiceCall } from "../../db/service-calls.ts";

/** What a run executes with. */
export interface PreparedRun {
  compiled: CompiledWorkflow;
  env: Record<string, string>;
}

/**
 * The compiled workflow and environment of an admitted or claimed run. Throws the ValidationError
 * of a state that cannot run: a manual run's draft with deploy-mode issues (the database's, which
 * admit hands over), or a state the graph compiler refuses.
 */
export async function prepareRun(call: ServiceCall, cache: RunCache, payload: RunPayload, assumedWorkspaceId?: string): Promise<PreparedRun> {
  const compiled = cache.compiledFor(payload);
  let env = cache.environmentFor(payload, assumedWorkspaceId);
  if (env === null) {
    env = (await call("workspace_environment", { p_workspace_id: payload.workflow.workspaceId })) as Record<string, string> | null ?? {};
    cache.rememberEnvironment(payload.workflow.workspaceId, payload.environment.version, env);
  }
  return { compiled, env };
}

/**
 * The trigger a recorded run starts from: its kind, its trigger block when one was recorded, and its
 * input (the async worker's claimed runs, and re-runs, which start as their original did).
 */
export function triggerOf(run: RunPayload): TriggerRequest {
  return {
    kind: run.trigger as TriggerKind,
    ...(run.triggerBlockId ? { blockId: run.triggerBlockId } : {}),
    ...(run.input !== null && run.input !== undefined ? { input: run.input } : {}),
  };
}

/** How a run ended, as finish_workflow_run takes it. */
export interface RunEnding {
  status: "completed" | "failed" | "cancelled";
  output?: unknown;
  error?: { message: string; code: string; failedBlock?: BlockIdentity | null } | null;
  traceSpans?: unknown;
  files?: UserFile[];
  modelUsage?: ModelUsage[];
  durationMs?: number;
  response?: StoredResponse | null;
  /** The run's kept block outcomes, masked (replay.ts's KeptDurability), stored with its end in one write. */
  checkpoints?: readonly Checkpoint[];
}

/** The ending of an executed run: a timeout is failed with RUN_TIMEOUT, a cancellation cancelled. */
export function endingOf(result: ExecutionResult, files: UserFile[] = []): RunEnding {
  const status = result.status === "success" ? "completed" : result.status === "cancelled" ? "cancelled" : "failed";
  const modelUsage = result.modelUsage;
  return {
    status,
    output: result.output,
    error: result.error && status === "failed" ? { message: result.error.message, code: result.error.code, failedBlock: result.error.block } : null,
    traceSpans: result.traceSpans,
    files,
    ...(modelUsage && modelUsage.length > 0 ? { modelUsage } : {}),
    durationMs: result.metadata.durationMs,
  };
}

/** The ending of a run refused after admission (its input, its selected outputs, its draft). */
export function refusedEnding(code: WorkflowErrorCode | string, message: string, response: StoredResponse): RunEnding {
  return { status: "failed", error: { message, code }, response, durationMs: 0 };
}

/** A NUL or a lone surrogate: text jsonb cannot hold (22P05, 22P02). */
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** A copy of a JSON-like value whose strings (and keys) jsonb can store: the unstorable characters become U+FFFD. */
export function storableCopy(value: unknown): unknown {
  if (typeof value === "string") return value.replace(UNSTORABLE, "\uFFFD");
  if (Array.isArray(value)) return value.map(storableCopy);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key.replace(UNSTORABLE, "\uFFFD"), storableCopy(item)]));
}

/** How many times a finish is sent when its connection is lost. */
const FINISH_ATTEMPTS = 3;

/** SQLSTATEs of text jsonb refused: a NUL (22P05, 22021) or a lone surrogate (22P02). */
export const UNSTORABLE_CODES = new Set(["22P05", "22021", "22P02"]);

/**
 * Records the run's end (idempotent in SQL: a second finish changes nothing, so a finish whose
 * connection was lost is simply sent again, up to FINISH_ATTEMPTS times). A run whose output holds
 * text jsonb cannot store (user code may return a NUL) is recorded with that text replaced, rather
 * than left for the sweeper.
 */
export async function finishRun(call: ServiceCall, executionId: string, ending: RunEnding): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await callFinish(call, executionId, ending);
      return;
    } catch (error) {
      if (UNSTORABLE_CODES.has(String((error as { code?: unknown }).code))) {
        ending = storableCopy(ending) as RunEnding;
      } else if (!isDatabaseUnavailable(error) || attempt >= FINISH_ATTEMPTS) {
        throw error;
      } else {
        await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
      }
    }
  }
}

/**
 * Records the end of a run stopped by an error thrown outside the executor, so its record does not
 * stay `running`, and returns the error recorded. A lost database connection is recorded as what
 * the caller was answered (503 DATABASE_UNAVAILABLE), anything else as INTERNAL_ERROR. Best effort:
 * when even this cannot be written, the run's lease runs out and it ends WORKER_LOST.
 */
export async function recordUnexpectedEnd(call: ServiceCall, executionId: string, error: unknown): Promise<{ message: string; code: string }> {
  const recorded = isDatabaseUnavailable(error)
    ? { message: "The run lost its database connection", code: "DATABASE_UNAVAILABLE" }
    : { message: "The run stopped on an internal error", code: "INTERNAL_ERROR" };
  await finishRun(call, executionId, { status: "failed", error: recorded }).catch(() => {});
  return recorded;
}

async function callFinish(call: ServiceCall, executionId: string, ending: RunEnding): Promise<void> {
  await call("finish_workflow_run", {
    p_execution_id: executionId,
    p_status: ending.status,
    p_output: ending.output === undefined ? null : ending.output,
    p_error: ending.error ?? null,
    p_trace_spans: ending.traceSpans ?? null,
    p_files: ending.files && ending.files.length > 0 ? ending.files : null,
    p_model_usage: ending.modelUsage ?? null,
    p_duration_ms: ending.durationMs ?? null,
    p_response: ending.response ?? null,
    p_checkpoints: ending.checkpoints && ending.checkpoints.length > 0 ? ending.checkpoints : null,
  });
}
