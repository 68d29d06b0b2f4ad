/**
 * Vector-store tools over Qdrant's REST API (outbound/qdrant.ts):
 *  - `vectordb_upsert_points`: `points` ([{id, vector, payload?}]) into the collection; output
 *    `{status, data}` with data Qdrant's result (`{operation_id, status}`);
 *  - `vectordb_search_vector`: the `limit` (default 10) points nearest `vector`, optionally within
 *    `filter`; output `{data: [{id, score, payload?, vector?}], status}`;
 *  - `vectordb_fetch_points`: the points with these `ids`; output `{data: [{id, payload?, vector?}], status}`.
 * What search and fetch return: `search_return_data` / `fetch_return_data` (`payload_only`,
 * `vector_only`, `both`, `none`) when set, else `with_payload` (default true) and `with_vector`
 * (default false).
 */
import type { BlockOutput } from "../../core/context.ts";
import { WorkflowError } from "../../core/errors.ts";
import { preview } from "../../core/values.ts";
import { qdrantRequest, type QdrantTarget } from "../../outbound/qdrant.ts";
import type { BlockHandler, BlockRun } from "../../core/block-handler.ts";
import { MAX_SEARCH_LIMIT, RETURN_DATA, type VectordbInput } from "./config.ts";
import { tracedFetch } from "../../outbound/traced-fetch.ts";

type ReturnData = (typeof RETURN_DATA)[number];

function fail(message: string): never {
  throw new WorkflowError("BLOCK_FAILED", message);
}

function text(input: VectordbInput, field: "url" | "collection"): string {
  const value = input[field];
  if (typeof value !== "string" || value.trim() === "") fail(`${field} must be text (got ${preview(value)})`);
  return value.trim();
}

/** A list field: an array, or JSON text of one (a reference inside text resolves to text). */
function list(input: VectordbInput, field: "points" | "vector" | "ids"): unknown[] {
  let value = input[field];
  if (value === undefined || value === null) fail(`${input.operation} needs ${field}`);
  if (typeof value === "string") {
    try {
      value = JSON.parse(value);
    } catch {
      // Reported below.
    }
  }
  if (!Array.isArray(value) || value.length === 0) fail(`${field} must be a non-empty list (got ${preview(input[field])})`);
  return value;
}

function isPointId(value: unknown): boolean {
  return (typeof value === "number" && Number.isInteger(value) && value >= 0) || (typeof value === "string" && value.length > 0);
}

/** Which of payload and vector to ask for, and to keep. */
function selection(input: VectordbInput, returnData: ReturnData | undefined): { payload: boolean; vector: boolean } {
  switch (returnData) {
    case "payload_only":
      return { payload: true, vector: false };
    case "vector_only":
      return { payload: false, vector: true };
    case "both":
      return { payload: true, vector: true };
    case "none":
      return { payload: false, vector: false };
    default:
      return { payload: input.with_payload ?? true, vector: input.with_vector ?? false };
  }
}

/** A point as the tools hand it back: id, score (search), then payload and vector when selected. */
function shape(point: unknown, keep: { payload: boolean; vector: boolean }, withScore: boolean): Record<string, unknown> {
  const source = (point ?? {}) as Record<string, unknown>;
  const out: Record<string, unknown> = { id: source.id ?? null };
  if (withScore) out.score = source.score ?? null;
  if (keep.payload) out.payload = source.payload ?? null;
  if (keep.vector) out.vector = source.vector ?? null;
  return out;
}

function limitOf(input: VectordbInput): number {
  if (input.limit === undefined || input.limit === null) return 10;
  const limit = typeof input.limit === "string" ? Number(input.limit) : input.limit;
  if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1 || limit > MAX_SEARCH_LIMIT) fail(`limit must be a whole number from 1 to ${MAX_SEARCH_LIMIT} (got ${preview(input.limit)})`);
  return limit;
}

function filterOf(input: VectordbInput): Record<string, unknown> | undefined {
  let filter = input.filter;
  if (filter === undefined || filter === null) return undefined;
  if (typeof filter === "string") {
    try {
      filter = JSON.parse(filter);
    } catch {
      // Reported below.
    }
  }
  if (typeof filter !== "object" || filter === null || Array.isArray(filter)) fail(`filter must be an object (got ${preview(input.filter)})`);
  return filter as Record<string, unknown>;
}

function asList(result: unknown, what: string): unknown[] {
  if (!Array.isArray(result)) throw new WorkflowError("PROVIDER_ERROR", `The vector store sent a malformed answer: ${what} is not a list`);
  return result;
}

/** Runs the block's tool; exported for the Agent block, which calls vector tools on the model's behalf. */
export async function runVectorTool(run: BlockRun<VectordbInput>): Promise<BlockOutput> {
  const input = run.input;
  const target: QdrantTarget = {
    url: text(input, "url"),
    collection: text(input, "collection"),
    ...(typeof input.apiKey === "string" && input.apiKey !== "" ? { apiKey: input.apiKey } : {}),
    fetch: tracedFetch(run.services.outbound.fetch, run.traceHeaders()),
    signal: run.signal,
    deadline: run.deadline,
    sleep: (ms, signal) => run.services.clock.sleep(ms, signal),
  };
  switch (input.operation) {
    case "vectordb_upsert_points": {
      const points = list(input, "points");
      points.forEach((point, index) => {
        const entry = point as Record<string, unknown> | null;
        if (entry === null || typeof entry !== "object" || !isPointId(entry.id) || entry.vector === undefined) fail(`points[${index}] must be {id, vector, payload?} with a whole-number or UUID id (got ${preview(point)})`);
      });
      const { value } = await qdrantRequest(target, "PUT", "/points?wait=true", { points });
      return { status: value.status, data: value.result };
    }
    case "vectordb_search_vector": {
      const vector = list(input, "vector");
      if (!vector.every((component) => typeof component === "number" && Number.isFinite(component))) fail("vector must be a list of numbers");
      const keep = selection(input, input.search_return_data);
      const filter = filterOf(input);
      const { value } = await qdrantRequest(target, "POST", "/points/search", { vector, limit: limitOf(input), ...(filter ? { filter } : {}), with_payload: keep.payload, with_vector: keep.vector });
      return { data: asList(value.result, "the search result").map((point) => shape(point, keep, true)), status: value.status };
    }
    case "vectordb_fetch_points": {
      const ids = list(input, "ids");
      ids.forEach((id, index) => {
        if (!isPointId(id)) fail(`ids[${index}] must be a whole number or a UUID (got ${preview(id)})`);
      });
      const keep = selection(input, input.fetch_return_data);
      const { value } = await qdrantRequest(target, "POST", "/points", { ids, with_payload: keep.payload, with_vector: keep.vector });
      return { data: asList(value.result, "the fetch result").map((point) => shape(point, keep, false)), status: value.status };
    }
    default:
      return fail(`operation must be one of vectordb_upsert_points, vectordb_search_vector, vectordb_fetch_points (got ${preview(input.operation)})`);
  }
}

/** Handler of `vectordb` blocks. */
export const vectordbHandler: BlockHandler<VectordbInput> = {
  timeoutMs: () => 120_000,
  secretsOf: (input) => (typeof input.apiKey === "string" && input.apiKey !== "" ? [input.apiKey] : []),
  execute: runVectorTool,
};
