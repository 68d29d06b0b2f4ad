/**
 * Vector-store tool config (the spec's `vectordb_upsert_points`, `vectordb_search_vector`,
 * `vectordb_fetch_points`): one block type whose `operation` picks the tool. The fields each tool
 * needs are checked when it runs (`points`, `vector`, `ids`), with a message naming the tool.
 */
import { z } from "zod";
import { numberOrTemplate, timeoutMs } from "../config-parts.ts";

/** The three tools. */
export const VECTOR_OPERATIONS = ["vectordb_upsert_points", "vectordb_search_vector", "vectordb_fetch_points"] as const;

/** A vector tool. */
export type VectorOperation = (typeof VECTOR_OPERATIONS)[number];

/** What `data` holds for search and fetch: payloads, vectors, both or neither (ids and scores only). */
export const RETURN_DATA = ["payload_only", "vector_only", "both", "none"] as const;

/** The most results a search may ask for. */
export const MAX_SEARCH_LIMIT = 1_000;

/** A list given inline, or a reference (`<embed.vectors>`) resolving to one. */
const listOrTemplate = z.union([z.array(z.unknown()), z.string().min(1)]);

/** The config of a `vectordb` block. */
export const vectordbConfigSchema = z
  .object({
    operation: z.enum(VECTOR_OPERATIONS),
    url: z.string().min(1),
    apiKey: z.string().optional(),
    collection: z.string().min(1),
    points: listOrTemplate.optional(),
    vector: listOrTemplate.optional(),
    ids: listOrTemplate.optional(),
    limit: numberOrTemplate(z.number().int().min(1).max(MAX_SEARCH_LIMIT)).optional(),
    filter: z.union([z.record(z.string(), z.unknown()), z.string().min(1)]).optional(),
    search_return_data: z.enum(RETURN_DATA).optional(),
    fetch_return_data: z.enum(RETURN_DATA).optional(),
    with_payload: z.boolean().optional(),
    with_vector: z.boolean().optional(),
    timeoutMs: timeoutMs(300_000),
  })
  .strict();

/** The resolved config (references filled in, so values may be anything). */
export interface VectordbInput {
  operation: VectorOperation;
  url: unknown;
  apiKey?: unknown;
  collection: unknown;
  points?: unknown;
  vector?: unknown;
  ids?: unknown;
  limit?: unknown;
  filter?: unknown;
  search_return_data?: (typeof RETURN_DATA)[number];
  fetch_return_data?: (typeof RETURN_DATA)[number];
  with_payload?: boolean;
  with_vector?: boolean;
}
