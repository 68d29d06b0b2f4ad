/**
 * The vector store's wire protocol: Qdrant's REST API. `PUT /collections/{c}/points?wait=true`
 * upserts, `POST /collections/{c}/points/search` searches by vector, `POST /collections/{c}/points`
 * fetches by id; the key goes in the `api-key` header. Answers are `{result, status: "ok", time}`,
 * errors `{status: {error}}`.
 */
import { callService, malformed, type ServiceResult } from "./service-call.ts";
import type { OutboundFetch } from "./services.ts";

/** Where the store is and how the call may run. */
export interface QdrantTarget {
  /** The store's base URL (a trailing slash is ignored). */
  url: string;
  apiKey?: string;
  collection: string;
  fetch: OutboundFetch;
  signal: AbortSignal;
  deadline: number;
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

/** Qdrant's answer: its `status` text and its `result`. */
export interface QdrantAnswer {
  status: string;
  result: unknown;
}

/** Per attempt. */
const QDRANT_TIMEOUT_MS = 30_000;

function errorText(body: unknown): string | null {
  const status = (body as { status?: { error?: unknown } } | null)?.status;
  return typeof status?.error === "string" ? status.error : null;
}

/** Sends one Qdrant request for the collection (`path` after `/collections/{c}`). */
export async function qdrantRequest(target: QdrantTarget, method: "POST" | "PUT", path: string, body: unknown): Promise<ServiceResult<QdrantAnswer>> {
  const base = target.url.replace(/\/+$/, "");
  return await callService(
    {
      service: "The vector store",
      url: `${base}/collections/${encodeURIComponent(target.collection)}${path}`,
      method,
      headers: target.apiKey ? { "api-key": target.apiKey } : {},
      body,
      fetch: target.fetch,
      signal: target.signal,
      deadline: target.deadline,
      sleep: target.sleep,
      timeoutMs: QDRANT_TIMEOUT_MS,
      errorText,
    },
    async (response) => {
      let answer: unknown;
      try {
        answer = await response.json();
      } catch {
        throw malformed("The vector store", "its answer is not JSON");
      }
      const record = answer as { status?: unknown; result?: unknown } | null;
      if (record === null || typeof record !== "object" || !("result" in record)) throw malformed("The vector store", "its answer has no result");
      return { status: typeof record.status === "string" ? record.status : "ok", result: record.result };
    },
  );
}
