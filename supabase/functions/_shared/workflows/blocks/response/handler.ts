/**
 * Response: ends the run with an HTTP answer. Its output becomes the run's output and, on the
 * execute endpoint, the response itself (status, headers, body). Blocks still running in other
 * branches are cancelled; nothing may follow a Response (validation refuses outgoing edges). Its
 * headers are checked against RFC 9110 (headers.ts) before they can reach an answer.
 */
import type { BlockOutput } from "../../core/context.ts";
import { WorkflowError } from "../../core/errors.ts";
import { asRecord, preview } from "../../core/values.ts";
import { DEFAULT_BLOCK_TIMEOUT_MS, type BlockHandler } from "../../core/block-handler.ts";
import { checkedHeaders } from "./headers.ts";

interface ResponseInput {
  status?: unknown;
  headers?: Record<string, unknown>;
  body?: unknown;
}

function statusOf(value: unknown): number {
  if (value === undefined) return 200;
  const status = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
  if (typeof status !== "number" || !Number.isInteger(status) || status < 100 || status > 599) {
    throw new WorkflowError("BLOCK_FAILED", `status must be an HTTP status code from 100 to 599 (got ${preview(value)})`);
  }
  return status;
}

/** Handler of `response` blocks. */
export const responseHandler: BlockHandler<ResponseInput> = {
  timeoutMs: () => DEFAULT_BLOCK_TIMEOUT_MS,
  execute(run): BlockOutput {
    const headers = checkedHeaders(asRecord(run.input.headers) ?? {});
    return { data: run.input.body === undefined ? null : run.input.body, status: statusOf(run.input.status), headers };
  },
};
