/**
 * `POST /api/v2/runs/{runId}/rerun` (docs/workflow-runs.md, "Re-running runs"): starts a new run of
 * what run {runId} ran, linked to it, and answers as a synchronous execute does.
 *
 *   parse (401 no key, 404 an id that is not a UUID, 413 over 1 MiB, 400 INVALID_BODY) →
 *   admit_workflow_run with p_rerun_of (401, 404 for a run the key may not see, 403, 409
 *   RERUN_NOT_SUPPORTED / RUN_IN_PROGRESS, 410 RUN_DATA_EXPIRED / DEPLOYMENT_GONE, 402, 429) →
 *   check against the version the original ran (400 UNKNOWN_BLOCK / NESTED_BLOCK, 400 INVALID_INPUT) →
 *   execute → finish → 200 (or what a Response block set; 500 EXECUTION_FAILED, 408), with
 *   X-Execution-Id (the new run) and X-Rerun-Of (the original)
 *
 * The new run is an API run in every other respect: admitted, charged, rate-limited (the sync
 * bucket), recorded, sent to webhooks and leased exactly as the execute endpoint's sync runs, whose
 * code it runs (execute-endpoint.ts's answerAdmittedRun).
 */
import type { Context } from "hono";
import { hasNoBody, readJson, validate } from "../../http/body.ts";
import { workflowErrors as errors } from "../workflow-errors.ts";
import { rerunHistory } from "../executor/rerun-history.ts";
import type { CompletedCheckpoint } from "../executor/replay.ts";
import type { AdmitAnswer } from "../runs/lifecycle-answers.ts";
import { SYNC_LEASE_SECONDS } from "../runs/run-lease.ts";
import { triggerOf } from "../runs/run-lifecycle.ts";
import { answerAdmittedRun } from "./execute-endpoint.ts";
import { apiKeyOf } from "./keyed-read.ts";
import { pathId } from "./read-endpoints.ts";
import { refusalError } from "./refusals.ts";
import type { RunServices } from "./run-services.ts";
import { rerunBody } from "./runs-rerun-schemas.ts";
import { MAX_KEPT_INPUT_BYTES } from "./schemas.ts";

/** Serves one re-run request (see the module comment). */
export async function handleRerun(c: Context, services: RunServices): Promise<Response> {
  const request = c.req.raw;
  const apiKey = apiKeyOf(request);
  const runId = pathId(c, "runId", "Run");
  const empty = hasNoBody(request);
  const body = validate(rerunBody, empty ? {} : await readJson(request, { errors, maxBytes: MAX_KEPT_INPUT_BYTES, contentType: null }), "body", errors);

  const answer = (await services.call("admit_workflow_run", {
    p_rerun_of: runId,
    p_rerun_from_block: body.fromBlock ?? null,
    p_trigger: "api",
    p_mode: "sync",
    p_api_key: apiKey,
    p_input: body.input ?? null,
    // The workflow is not known before admission: every deployment this instance holds is offered.
    p_cached_deployment_ids: services.cache.claimHints().p_cached_deployment_ids,
    p_lease_seconds: SYNC_LEASE_SECONDS,
  })) as AdmitAnswer;
  if (answer.outcome === "refused") throw refusalError(answer);
  if (answer.outcome !== "admitted" || answer.status !== 200) throw new Error(`admit answered a re-run with ${answer.outcome} ${answer.status}`);

  const fromBlock = body.fromBlock;
  const original = (answer.checkpoints ?? []).filter((checkpoint): checkpoint is CompletedCheckpoint => checkpoint.kind === "completed");
  return await answerAdmittedRun(c, services, answer, {
    trigger: triggerOf(answer),
    controls: {},
    timeoutMs: services.syncTimeoutMs,
    replay: fromBlock === undefined ? undefined : (prepared) => rerunHistory(prepared.compiled, original, fromBlock),
    headers: { "X-Rerun-Of": runId },
  });
}
