/**
 * `POST /api/webhooks/trigger/{path}`: an outside service starts the workflow whose active
 * deployment has a generic_webhook block listening on `path`.
 *
 *   path (404) → the block's secret, when it requires one (401; compared in constant time) →
 *   the body (400, 413) and its Input Format (400 INVALID_INPUT, 413 FILE_TOO_LARGE) →
 *   admit_trigger_run, async (403 NOT_DEPLOYED, 402, 429, or the replay of a repeated delivery) →
 *   202 {success, executionId}
 *
 * Processing is asynchronous: the run is queued in pgmq and the workflow-worker function runs it;
 * a failure shows in the execution records, not in this answer. Everything refused here is
 * refused before admission, so it runs nothing and costs nothing. A repeated delivery (the same
 * Idempotency-Key, or the sender's delivery-id header) answers the first delivery's execution
 * instead of running again. docs/triggers.md has the contract.
 */
import type { Context } from "hono";
import { hasNoBody, readJson, readParams } from "../../http/body.ts";
import { secretsEqual } from "../../http/constant-time.ts";
import { HttpError } from "../../http/errors.ts";
import { requestLogger } from "../../http/logger.ts";
import { workflowErrors as errors, workflowLog } from "../workflow-errors.ts";
import type { InputField } from "../blocks/input-format.ts";
import { WEBHOOK_PATH } from "../blocks/generic-webhook/config.ts";
import { WorkflowError } from "../core/errors.ts";
import { FileTooLargeError } from "../core/files.ts";
import type { AdmitAnswer, Refusal } from "../runs/lifecycle-answers.ts";
import { checkInputFormat } from "../runs/trigger-input.ts";
import { requestHash } from "./execute-endpoint.ts";
import { rateLimitHeaders } from "./rate-limit-headers.ts";
import { refusalError } from "./refusals.ts";
import type { RunServices } from "./run-services.ts";
import { MAX_EXECUTE_BODY_BYTES } from "./schemas.ts";
import { incomingTrace } from "../tracing/trace-context.ts";

/** What webhook_trigger_target answers for a registered path. */
interface WebhookTarget {
  status: 200;
  workflowId: string;
  blockId: string;
  blockName: string;
  requireAuth: boolean;
  /** Null: the token is sent as `Authorization: Bearer <token>`. */
  secretHeaderName: string | null;
  /** The block's token, a `{{NAME}}` resolved; null when that variable is not set. */
  token: string | null;
  tokenVariable: string | null;
  inputFormat: InputField[];
}

/**
 * Headers that name a delivery, in the order they are read: ours, then the ids senders put on
 * every delivery (Standard Webhooks, GitHub, Shopify and others), so a redelivery is recognised.
 */
export const DELIVERY_ID_HEADERS = ["idempotency-key", "service-delivery-id", "webhook-id", "x-webhook-id", "x-github-delivery", "x-shopify-webhook-id", "x-event-id"];

/** Longest delivery id taken (the key is stored with a `webhook:` prefix within Idempotency-Key's 255). */
const MAX_DELIVERY_ID = 200;

/** The delivery's id, or null when the sender gave none. */
function deliveryId(headers: Headers): string | null {
  for (const name of DELIVERY_ID_HEADERS) {
    const value = headers.get(name)?.trim();
    if (value === undefined) continue;
    if (value === "" || value.length > MAX_DELIVERY_ID) throw new HttpError(400, "INVALID_HEADER", `${name}: a delivery id of 1 to ${MAX_DELIVERY_ID} characters`, { header: name });
    return value;
  }
  return null;
}

/** Refuses the request unless it carries the block's secret where the block says. */
async function authenticate(target: WebhookTarget, request: Request, path: string): Promise<void> {
  if (!target.requireAuth) return;
  const where = target.secretHeaderName ? `the ${target.secretHeaderName} header` : "Authorization: Bearer <token>";
  const given = target.secretHeaderName
    ? request.headers.get(target.secretHeaderName)
    : /^Bearer\s+(.+)$/i.exec(request.headers.get("authorization")?.trim() ?? "")?.[1] ?? null;
  if (given === null || given === "") throw new HttpError(401, "UNAUTHORIZED", `This webhook requires its secret in ${where}`);
  if (target.token === null) {
    // The block names an environment variable that is not set: nothing can match, and the
    // workspace should hear why its webhook refuses everything.
    requestLogger(workflowLog, request).warn("webhook_token_unset", { path, workflowId: target.workflowId, variable: target.tokenVariable });
  }
  if (target.token === null || !(await secretsEqual(given, target.token))) {
    throw new HttpError(401, "UNAUTHORIZED", `The secret in ${where} does not match this webhook's`);
  }
}

/** Serves one webhook delivery (see the module comment). */
export async function handleWebhookTrigger(c: Context, services: RunServices): Promise<Response> {
  const request = c.req.raw;
  const { path } = readParams(c.req.param() as Record<string, string>, errors);
  if (!WEBHOOK_PATH.test(path)) throw new HttpError(404, "NOT_FOUND", `No deployed workflow listens on webhook path "${path}"`);
  const target = (await services.call("webhook_trigger_target", { p_path: path })) as WebhookTarget | Refusal;
  if ("outcome" in target) throw refusalError(target);
  await authenticate(target, request, path);

  const delivery = deliveryId(request.headers);
  const empty = hasNoBody(request);
  const body = empty ? {} : await readJson(request, { errors, maxBytes: MAX_EXECUTE_BODY_BYTES, contentType: null });
  try {
    await checkInputFormat(target.inputFormat, body, target.blockName);
  } catch (error) {
    if (error instanceof FileTooLargeError) throw new HttpError(413, "FILE_TOO_LARGE", error.message);
    if (error instanceof WorkflowError) throw new HttpError(400, "INVALID_INPUT", error.message);
    throw error;
  }

  const answer = (await services.call("admit_trigger_run", {
    p_trigger: "webhook",
    p_workflow_id: target.workflowId,
    p_trigger_block_id: target.blockId,
    p_mode: "async",
    p_input: body,
    p_idempotency_key: delivery === null ? null : `webhook:${delivery}`,
    p_request_hash: delivery === null ? null : await requestHash(body, "async"),
    p_trace: incomingTrace(c.req.raw.headers),
  })) as AdmitAnswer;
  if (answer.outcome === "refused") throw refusalError(answer);
  const headers: Record<string, string> = { "X-Execution-Id": answer.executionId };
  if (answer.outcome === "replay") return Response.json({ success: true, executionId: answer.executionId }, { status: 202, headers: { ...headers, "Idempotent-Replayed": "true" } });
  return Response.json({ success: true, executionId: answer.executionId }, { status: 202, headers: { ...headers, ...rateLimitHeaders(answer.rateLimit) } });
}
