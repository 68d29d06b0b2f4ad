/**
 * User code in a function of its own, for runtimes without Web Workers (hosted Supabase Edge
 * Functions and `supabase start`: "Web Worker API (or Node vm API) are not available"). Each call
 * is one POST to the `workflow-sandbox` function, which runs it in QuickJS in its own isolate and
 * answers with the outcome, so CPU-bound code occupies that isolate, under the platform's per-request
 * CPU limit, and never the `api` function's. The caller's side only awaits a fetch: its thread keeps
 * serving, independent calls overlap, and a cancellation aborts the fetch at once (the remote call
 * then ends at its own deadline or CPU limit, unobserved). docs/workflow-limits.md weighs this
 * against the worker pool.
 *
 * Both sides are here because they share the wire format: `remoteSandbox` (the client) and
 * `serveSandboxRequest` (the function's handler, service role only).
 */
import { z } from "zod";
import { readEnv } from "../../config/env.ts";
import { readJson, validate } from "../../http/body.ts";
import { resolveCaller } from "../../http/caller.ts";
import { HttpError } from "../../http/errors.ts";
import { serveEndpoint } from "../../http/routing.ts";
import { workflowErrors, workflowLog } from "../workflow-errors.ts";
import { messageOf, WorkflowError } from "../core/errors.ts";
import { MAX_BLOCK_OUTPUT_CHARS, MAX_REQUEST_BODY_BYTES, MAX_SANDBOX_MEMORY_BYTES, MAX_SANDBOX_TIMEOUT_MS } from "../core/limits.ts";
import type { SandboxOutcome } from "./quickjs-runner.ts";
import type { Sandbox } from "../core/sandbox-contract.ts";
import { refuseEarly, runInline, settle, toCall } from "./sandbox.ts";

/** The body of a call: the call with a time limit instead of a deadline (the two isolates' clocks may differ). */
export const remoteCallSchema = z
  .object({
    kind: z.enum(["function", "expression"]),
    source: z.string(),
    valuesJson: z.string(),
    timeoutMs: z.number().int().min(0).max(MAX_SANDBOX_TIMEOUT_MS),
    memoryBytes: z.number().int().min(1024 * 1024).max(MAX_SANDBOX_MEMORY_BYTES),
    maxResultChars: z.number().int().min(0).max(MAX_BLOCK_OUTPUT_CHARS),
  })
  .strict();

/** A call as sent over HTTP. */
export type RemoteCall = z.output<typeof remoteCallSchema>;

/** Where the client finds the function: its URL and the service-role key it calls with. */
export interface RemoteSandboxOptions {
  url: string;
  key: string;
  /** How long after the call's deadline the client stops waiting for an answer. */
  graceMs?: number;
}

/** The `workflow-sandbox` function of this project (SUPABASE_URL), called with the service-role key. */
export function projectSandboxOptions(): RemoteSandboxOptions {
  const base = readEnv("WORKFLOW_SANDBOX_URL") ?? `${readEnv("SUPABASE_URL") ?? ""}/functions/v1/workflow-sandbox`;
  return { url: base, key: readEnv("SUPABASE_SERVICE_ROLE_KEY") ?? "" };
}

/** What an answer other than 200 means for the code. */
function failedCall(status: number, text: string): WorkflowError {
  if (status === 546) {
    return new WorkflowError("SANDBOX_TIMEOUT", "the sandbox function was stopped by the platform's resource limits (546 WORKER_LIMIT: its CPU time or memory)");
  }
  return new WorkflowError("BLOCK_FAILED", `the sandbox function answered ${status}: ${text.slice(0, 200)}`);
}

/** The client: each call is a POST to the function (see the module comment). */
export function remoteSandbox(options: RemoteSandboxOptions): Sandbox {
  const graceMs = options.graceMs ?? 2_000;
  return {
    async run(request) {
      refuseEarly(request);
      const { deadline, ...call } = toCall(request);
      const body: RemoteCall = { ...call, timeoutMs: Math.min(MAX_SANDBOX_TIMEOUT_MS, Math.max(0, deadline - Date.now())) };
      const controller = new AbortController();
      const timer = setTimeout(
        () => controller.abort(new WorkflowError("SANDBOX_TIMEOUT", "the sandbox function did not answer by the code's time limit")),
        Math.max(0, deadline - Date.now()) + graceMs,
      );
      const onAbort = () => controller.abort(request.signal?.reason);
      request.signal?.addEventListener("abort", onAbort, { once: true });
      try {
        const response = await fetch(options.url, {
          method: "POST",
          headers: { authorization: `Bearer ${options.key}`, "content-type": "application/json" },
          body: JSON.stringify(body),
          signal: controller.signal,
        });
        const text = await response.text();
        if (response.status !== 200) throw failedCall(response.status, text);
        return settle(JSON.parse(text) as SandboxOutcome, request.refs);
      } catch (error) {
        if (controller.signal.aborted) throw controller.signal.reason;
        if (error instanceof WorkflowError) throw error;
        throw new WorkflowError("BLOCK_FAILED", `the sandbox function could not be reached: ${messageOf(error)}`);
      } finally {
        clearTimeout(timer);
        request.signal?.removeEventListener("abort", onAbort);
      }
    },
  };
}

/** The biggest body the function reads: a call's source and values, which the run's output budget bounds. */
const MAX_CALL_BYTES = MAX_REQUEST_BODY_BYTES + MAX_BLOCK_OUTPUT_CHARS;

/**
 * The `workflow-sandbox` function's handler: `POST` a RemoteCall with the service-role key; the
 * answer is the outcome (`{ok: true, resultJson, stdout}` or `{ok: false, code, message}`), always
 * 200 once the call ran, whatever the code did.
 */
export const serveSandboxRequest = serveEndpoint({
  methods: ["POST"],
  errors: workflowErrors,
  logger: workflowLog,
  async handle(request) {
    const caller = await resolveCaller(request, { errors: workflowErrors });
    if (caller.kind !== "service") throw new HttpError(403, "FORBIDDEN", "Only the project's own functions may run code here (use the service-role key)");
    const call = validate(remoteCallSchema, await readJson(request, { errors: workflowErrors, maxBytes: MAX_CALL_BYTES }), "body", workflowErrors);
    const deadline = Date.now() + call.timeoutMs;
    return Response.json(await runInline({ ...call, deadline }, () => (Date.now() > deadline ? "timeout" : null)));
  },
});
