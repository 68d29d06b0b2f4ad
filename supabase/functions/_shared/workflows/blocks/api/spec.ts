/** The `api` block type: an HTTP request to any public URL, with retries. */
import { defineBlock } from "../block-spec.ts";
import { apiConfigSchema } from "./config.ts";

/** API (HTTP request). */
export const apiSpec = defineBlock({
  type: "api",
  category: "core",
  summary: "Sends an HTTP request (GET, POST, PUT, DELETE, PATCH) to a public URL, retrying timeouts, 429 and 5xx.",
  configSchema: apiConfigSchema,
  rules: [],
});
