/**
 * Agent config: the model (and optionally its provider, the user's own key and endpoint), the
 * prompts, sampling settings, an optional JSON Schema the answer must follow, streaming, and tools:
 * API or vector-store blocks the model may call.
 */
import { z } from "zod";
import { numberOrTemplate, timeoutMs } from "../config-parts.ts";

/** Block types an Agent can use as tools. */
export const TOOL_BLOCK_TYPES = ["api", "vectordb"] as const;

/** Most tools one Agent may offer. */
export const MAX_TOOLS = 20;

/** Default and most tool calls one Agent execution may make. */
export const DEFAULT_MAX_TOOL_CALLS = 10;
export const MAX_TOOL_CALLS = 50;

/** The longest an Agent block may take. */
export const MAX_AGENT_TIMEOUT_MS = 600_000;

/** Fields every block that calls a model has: which model, through which provider, with whose key. */
export const modelFields = {
  model: z.string().min(1),
  provider: z.enum(["openai", "anthropic"]).optional(),
  apiKey: z.string().optional(),
  baseUrl: z.string().min(1).optional(),
  temperature: numberOrTemplate(z.number().min(0).max(2)).optional(),
};

/** A tool: a name the model calls it by, what it does, and the block config it runs with (fixed fields). */
export const agentToolSchema = z
  .object({
    name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/),
    description: z.string().optional(),
    type: z.enum(TOOL_BLOCK_TYPES),
    config: z.record(z.string(), z.unknown()),
  })
  .strict();

/** The config of an `agent` block. */
export const agentConfigSchema = z
  .object({
    ...modelFields,
    systemPrompt: z.string().optional(),
    userPrompt: z.unknown(),
    maxTokens: numberOrTemplate(z.number().int().min(1).max(200_000)).optional(),
    responseFormat: z.union([z.record(z.string(), z.unknown()), z.string().min(1)]).optional(),
    stream: z.boolean().optional(),
    tools: z.array(agentToolSchema).max(MAX_TOOLS).optional(),
    maxToolCalls: z.number().int().min(1).max(MAX_TOOL_CALLS).optional(),
    timeoutMs: timeoutMs(MAX_AGENT_TIMEOUT_MS),
  })
  .strict();

/** A tool as the handler sees it (references resolved). */
export interface AgentTool {
  name: string;
  description?: string;
  type: (typeof TOOL_BLOCK_TYPES)[number];
  config: Record<string, unknown>;
}

/** The resolved config. */
export interface AgentInput {
  model: unknown;
  provider?: unknown;
  apiKey?: unknown;
  baseUrl?: unknown;
  temperature?: unknown;
  systemPrompt?: unknown;
  userPrompt: unknown;
  maxTokens?: unknown;
  responseFormat?: unknown;
  stream?: boolean;
  tools?: AgentTool[];
  maxToolCalls?: number;
}
