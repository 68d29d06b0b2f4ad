/** The `vectordb` block type: the vector-store tools (upsert, search, fetch) over Qdrant's REST API. */
import { defineBlock } from "../block-spec.ts";
import { vectordbConfigSchema } from "./config.ts";

/** Vector store. */
export const vectordbSpec = defineBlock({
  type: "vectordb",
  category: "tools",
  summary: "Upserts, searches and fetches points in a Qdrant-compatible vector store.",
  configSchema: vectordbConfigSchema,
  rules: [],
});
