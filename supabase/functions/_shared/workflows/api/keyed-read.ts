/**
 * The reads of the logs and runs APIs: each request carries an X-API-Key and is answered by one SQL
 * function that authenticates the key, spends a token of the account's logs bucket, checks what the
 * key may read and reads it, over the instance's service-role pool in one round trip
 * (db/service-calls.ts; a lost connection is a 503). The function answers
 * {status: 200, body, rateLimit} or a refusal {status, code, error, retryAfter?, rateLimit?}; this
 * module turns either into the HTTP answer, with the bucket in X-RateLimit-Limit / -Remaining /
 * -Reset (ISO), and Retry-After on a 429.
 */
import { z } from "zod";
import { HttpError } from "../../http/errors.ts";
import { workflowErrors as errors, workflowLog } from "../workflow-errors.ts";
import type { RpcArgs } from "../../db/rpc.ts";
import type { ServiceCall } from "../../db/service-calls.ts";
import { expiryDetails } from "./refusals.ts";

/** The logs bucket as the SQL functions report it (the X-RateLimit-* headers). */
const rateLimitState = z.object({
  limit: z.number(),
  remaining: z.number(),
  resetAt: z.string(),
  retryAfter: z.number(),
});

/** What a keyed read's SQL function answers: the HTTP body with its status, or a refusal. */
const keyedReadAnswer = z.union([
  z.object({ status: z.literal(200), body: z.record(z.string(), z.unknown()), rateLimit: rateLimitState }),
  z.object({
    status: z.number().int().min(400).max(499),
    code: z.string(),
    error: z.string(),
    retryAfter: z.number().int().optional(),
    rateLimit: rateLimitState.nullish(),
    expiredAt: z.string().optional(),
    retentionDays: z.number().int().optional(),
  }),
]);

/** The X-API-Key of the request; these APIs take no other credentials. */
export function apiKeyOf(request: Request): string {
  const key = request.headers.get("x-api-key")?.trim();
  if (!key) throw new HttpError(401, "UNAUTHORIZED", "API key required: send it in the X-API-Key header");
  return key;
}

/** What a keyed-read app (logs, runs) is built from; tests may pass their own database access. */
export interface KeyedReadOptions {
  rpc?: ServiceCall;
}

/** The SQL functions behind the keyed reads (each answers as keyedReadAnswer describes). */
export type KeyedReadFunction = "workflow_logs_json" | "workflow_log_detail" | "workflow_execution_detail" | "workflow_runs" | "workflow_run_detail" | "resume_workflow_run"
  | "workflow_run_cancel" | "workflow_runs_cancel";

/**
 * Calls the read function `fn` and answers with its body (reshaped by `render`) and the rate limit
 * headers, or throws its refusal as an HttpError carrying the same headers. `status` is the
 * success's (the resume API, which acts on the run it reads, answers 202).
 */
export async function answerKeyedRead<Fn extends KeyedReadFunction>(rpc: ServiceCall, fn: Fn, args: RpcArgs<Fn>, render: (body: Record<string, unknown>) => unknown = (body) => body, status = 200): Promise<Response> {
  const parsed = keyedReadAnswer.safeParse(await rpc(fn, args));
  if (!parsed.success) {
    workflowLog.error("keyed_read_unexpected_answer", { fn });
    throw errors.describe({ kind: "internal" });
  }
  const result = parsed.data;
  const headers: Record<string, string> = { "Cache-Control": "no-store" };
  if (result.rateLimit) {
    headers["X-RateLimit-Limit"] = String(result.rateLimit.limit);
    headers["X-RateLimit-Remaining"] = String(result.rateLimit.remaining);
    headers["X-RateLimit-Reset"] = new Date(result.rateLimit.resetAt).toISOString();
  }
  if (!("body" in result)) {
    const retryAfter = result.status === 429 ? result.retryAfter ?? result.rateLimit?.retryAfter : undefined;
    if (retryAfter !== undefined) headers["Retry-After"] = String(retryAfter);
    const details = { ...(retryAfter === undefined ? {} : { retryAfter }), ...expiryDetails(result) };
    throw new HttpError(result.status, result.code, result.error, Object.keys(details).length === 0 ? undefined : details, headers);
  }
  return Response.json(render(result.body), { status, headers });
}
