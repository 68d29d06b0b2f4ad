/** API block config: the request (URL, method, path and query parameters, headers, JSON body) and how it is retried. */
import { z } from "zod";
import { MAX_RETRIES } from "../../outbound/retry.ts";
import { timeoutMs } from "../config-parts.ts";

/** The methods the API block sends. */
export const HTTP_METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH"] as const;

/** The largest response body a block may accept. */
export const MAX_RESPONSE_BYTES = 50 * 1024 * 1024;

/** The longest one attempt may take. */
export const MAX_REQUEST_TIMEOUT_MS = 300_000;

/** The longest an API block may take, all attempts and waits included. */
export const MAX_API_BLOCK_TIMEOUT_MS = 600_000;

const keyValues = z.record(z.string().min(1), z.unknown());

/** The config of an `api` block. */
export const apiConfigSchema = z
  .object({
    url: z.string().min(1),
    method: z.enum(HTTP_METHODS).optional(),
    pathParams: keyValues.optional(),
    query: keyValues.optional(),
    headers: keyValues.optional(),
    body: z.unknown().optional(),
    retries: z.number().int().min(0).max(MAX_RETRIES).optional(),
    retryDelayMs: z.number().int().min(0).max(60_000).optional(),
    retryMaxDelayMs: z.number().int().min(0).max(300_000).optional(),
    requestTimeoutMs: z.number().int().min(1).max(MAX_REQUEST_TIMEOUT_MS).optional(),
    maxResponseBytes: z.number().int().min(1).max(MAX_RESPONSE_BYTES).optional(),
    followRedirects: z.boolean().optional(),
    timeoutMs: timeoutMs(MAX_API_BLOCK_TIMEOUT_MS),
  })
  .strict();

/** The resolved config as the handler sees it (references filled in, so values may be anything). */
export interface ApiInput {
  url: unknown;
  method?: (typeof HTTP_METHODS)[number];
  pathParams?: Record<string, unknown>;
  query?: Record<string, unknown>;
  headers?: Record<string, unknown>;
  body?: unknown;
  retries?: number;
  retryDelayMs?: number;
  retryMaxDelayMs?: number;
  requestTimeoutMs?: number;
  maxResponseBytes?: number;
  followRedirects?: boolean;
}
