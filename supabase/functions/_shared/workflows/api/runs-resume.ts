/**
 * POST /api/v2/runs/{runId}/resume, and Sim's /api/v2/workflows/{workflowId}/runs/{runId}/resume: a
 * program answers the approval a run waits at (docs/workflow-runs.md "Approvals"). Sim's body,
 * `{contextId?, input}`, with `input` this service's answer `{decision: approve | reject, comment?,
 * fields?}`; the answer decides the approval at once and the run resumes. One SQL call
 * (resume_workflow_run) authenticates the key, spends a logs API token, checks the run is readable
 * (else 404, never 403) and waiting (else 409 NOT_PAUSED) and records the answer. 202 `{data: {runId,
 * contextId, decision}}`.
 */
import type { Context } from "hono";
import { z } from "zod";
import { readJson, validate } from "../../http/body.ts";
import { workflowErrors as errors } from "../workflow-errors.ts";
import type { ServiceCall } from "../../db/service-calls.ts";
import { answerKeyedRead, apiKeyOf } from "./keyed-read.ts";
import { pathId } from "./read-endpoints.ts";

/** The resume request's body (the form values are checked against the approval's fields in SQL). */
export const resumeBody = z
  .object({
    /** The approval block instance (the run's `paused.contextId`); needed only when several wait. */
    contextId: z.string().min(1).max(500).optional(),
    input: z
      .object({
        decision: z.enum(["approve", "reject"]),
        comment: z.string().max(2000).optional(),
        fields: z.record(z.string(), z.unknown()).optional(),
      })
      .strict(),
  })
  .strict();

/** The largest resume body: a comment and ten form fields of 2,000 characters fit many times over. */
const MAX_RESUME_BYTES = 64 * 1024;

/** Handles POST …/runs/{runId}/resume. */
export async function resumeRun(c: Context, rpc: ServiceCall): Promise<Response> {
  const apiKey = apiKeyOf(c.req.raw);
  const workflowId = c.req.param("workflowId") === undefined ? null : pathId(c, "workflowId", "Workflow");
  const runId = pathId(c, "runId", "Run");
  const body = validate(resumeBody, await readJson(c.req.raw, { errors, maxBytes: MAX_RESUME_BYTES }), "body", errors);
  return await answerKeyedRead(rpc, "resume_workflow_run", {
    p_api_key: apiKey, p_run_id: runId, p_workflow_id: workflowId, p_context_id: body.contextId ?? null, p_input: body.input,
  }, (answer) => answer, 202);
}
