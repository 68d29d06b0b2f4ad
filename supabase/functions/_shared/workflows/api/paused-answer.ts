/**
 * A sync or streamed run that reaches an approval (docs/workflow-runs.md, "Approvals"): its executor
 * has opened the approval and stopped there with a timer checkpoint, as an async run parks. The
 * request hands the run to the async path in one call (pause_sync_workflow_run: its collected
 * outcomes stored, the run made async and parked until the approval's timeout) and is answered as
 * Sim answers a paused run: 200, `status: "paused"`, the pause, and where to poll and resume. The
 * run goes on asynchronously once the approval is decided (or times out), and is finished, billed
 * and sent to webhooks once, by the worker that resumes it.
 */
import type { ExecutionResult } from "../core/context.ts";
import type { CollectedOutcomes } from "../runs/collected-outcomes.ts";
import type { ParkAnswer, RunPayload, StoredResponse } from "../runs/lifecycle-answers.ts";
import { WORKER_LOST } from "../runs/run-lease.ts";
import { finishRun } from "../runs/run-lifecycle.ts";
import type { ServiceCall } from "../../db/service-calls.ts";

/** Why a paused run could not be handed over: the run is not this request's any more. */
export interface PauseRefused {
  code: string;
  message: string;
}

/**
 * The paused answer, before the database fills in `paused` (the pause as GET /api/v2/runs/{runId}
 * shows it): the execute answer's fields with Sim's `status` and the runs API's links.
 */
function pausedResponse(run: RunPayload, result: ExecutionResult): StoredResponse {
  const runs = `/api/v2/runs/${run.executionId}`;
  return {
    status: 200,
    headers: {},
    body: {
      success: true, executionId: run.executionId, workflowId: run.workflow.id, status: "paused", output: null, paused: null,
      links: { status: runs, resume: `${runs}/resume` },
      metadata: { duration: result.metadata.durationMs, startTime: result.metadata.startTime },
    },
  };
}

/**
 * Hands a run parked at an approval (`result.status` "parked") to the async path and answers what the
 * request is to say: the paused answer, or why not (its lease was lost: WORKER_LOST; it was asked to
 * stop: it is finished cancelled here, as the worker finishes a run it could not park).
 */
export async function handOverPausedRun(call: ServiceCall, run: RunPayload, result: ExecutionResult, outcomes: CollectedOutcomes): Promise<StoredResponse | PauseRefused> {
  const answer = (await call("pause_sync_workflow_run", {
    p_execution_id: run.executionId, p_attempt: run.attempt, p_resume_at: result.resumeAt as string, p_checkpoints: outcomes.recorded, p_response: pausedResponse(run, result),
  })) as ParkAnswer & { response?: StoredResponse };
  if (answer.parked && answer.response) return answer.response;
  if (answer.alive && answer.cancelRequested) {
    await finishRun(call, run.executionId, { status: "cancelled", durationMs: result.metadata.durationMs });
    return { code: "CANCELLED", message: "the run was cancelled" };
  }
  return WORKER_LOST;
}
