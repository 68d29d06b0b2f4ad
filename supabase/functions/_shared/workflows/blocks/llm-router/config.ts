/** LLM Router config: what to route, the routes described in words, and the model that chooses. */
import { z } from "zod";
import { modelFields } from "../agent/config.ts";
import { handleId, timeoutMs } from "../config-parts.ts";

/** The config of an `llm_router` block. */
export const llmRouterConfigSchema = z
  .object({
    ...modelFields,
    prompt: z.unknown(),
    systemPrompt: z.string().optional(),
    routes: z
      .array(z.object({ id: handleId, title: z.string().optional(), description: z.string().min(1) }).strict())
      .min(1)
      .max(50),
    timeoutMs: timeoutMs(300_000),
  })
  .strict();

/** The resolved config. */
export interface LlmRouterInput {
  model: unknown;
  provider?: unknown;
  apiKey?: unknown;
  baseUrl?: unknown;
  temperature?: unknown;
  prompt: unknown;
  systemPrompt?: unknown;
  routes: { id: string; title?: string; description: string }[];
}
