/**
 * Agent: asks a model (OpenAI-compatible chat completions or Anthropic messages), lets it call the
 * block's tools until it answers, and reports the answer with its tokens and cost. With `stream`,
 * the answer's text goes to the run's listeners as it arrives (`emitChunk`: the execute endpoint's
 * SSE). With `responseFormat` (a JSON Schema), the answer must be JSON and `json` holds it parsed.
 * Output: `content`, `model`, `tokens {prompt, completion, total}`, `cost {input, output, total}`
 * (what the run's record charges for these calls), `toolCalls`, and `json` with a responseFormat.
 */
import type { BlockOutput } from "../../core/context.ts";
import { WorkflowError } from "../../core/errors.ts";
import { preview } from "../../core/values.ts";
import type { ChatMessage } from "../../outbound/providers/chat.ts";
import { MeteredModel } from "../../outbound/providers/model-call.ts";
import type { BlockHandler } from "../../core/block-handler.ts";
import { DEFAULT_MAX_TOOL_CALLS, type AgentInput } from "./config.ts";
import { checkTools, runToolCall, toolSecrets, toolSpec, type ToolCallRecord } from "./tools.ts";

/** The Agent's timeout when its config sets none. */
export const DEFAULT_AGENT_TIMEOUT_MS = 180_000;

function fail(message: string): never {
  throw new WorkflowError("BLOCK_FAILED", message);
}

/** A prompt as text: strings as they are, anything else (a reference to an object) as JSON. */
function promptText(value: unknown, field: string, required: boolean): string | undefined {
  if (value === undefined || value === null || value === "") {
    if (required) fail(`${field} is empty`);
    return undefined;
  }
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** A number setting given as a number or as text a reference produced. */
export function numberSetting(value: unknown, field: string, min: number, max: number, integer: boolean): number | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  const number = typeof value === "string" ? Number(value) : value;
  if (typeof number !== "number" || !Number.isFinite(number) || number < min || number > max || (integer && !Number.isInteger(number))) {
    fail(`${field} must be a ${integer ? "whole number" : "number"} from ${min} to ${max} (got ${preview(value)})`);
  }
  return number;
}

/** The JSON Schema the answer must follow: an object, or JSON text of one. */
function responseSchemaOf(value: unknown): Record<string, unknown> | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  let schema = value;
  if (typeof schema === "string") {
    try {
      schema = JSON.parse(schema);
    } catch {
      fail("responseFormat must be a JSON Schema object (its text does not parse)");
    }
  }
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) fail("responseFormat must be a JSON Schema object");
  return schema as Record<string, unknown>;
}

/** Handler of `agent` blocks. */
export const agentHandler: BlockHandler<AgentInput> = {
  timeoutMs: () => DEFAULT_AGENT_TIMEOUT_MS,
  secretsOf: (input) => [...(typeof input.apiKey === "string" && input.apiKey !== "" ? [input.apiKey] : []), ...toolSecrets(input.tools)],
  async execute(run): Promise<BlockOutput> {
    const input = run.input;
    const userPrompt = promptText(input.userPrompt, "userPrompt", true) as string;
    const system = promptText(input.systemPrompt, "systemPrompt", false);
    const temperature = numberSetting(input.temperature, "temperature", 0, 2, false);
    const maxTokens = numberSetting(input.maxTokens, "maxTokens", 1, 200_000, true);
    const responseSchema = responseSchemaOf(input.responseFormat);
    const tools = input.tools ?? [];
    checkTools(tools);
    const maxToolCalls = input.maxToolCalls ?? DEFAULT_MAX_TOOL_CALLS;
    const model = MeteredModel.open(run, input);

    const messages: ChatMessage[] = [{ role: "user", content: userPrompt }];
    const toolCalls: ToolCallRecord[] = [];
    const specs = tools.map(toolSpec);
    for (;;) {
      const answer = await model.send({
        ...(system ? { system } : {}),
        messages,
        ...(temperature !== undefined ? { temperature } : {}),
        ...(maxTokens !== undefined ? { maxTokens } : {}),
        ...(specs.length > 0 ? { tools: specs } : {}),
        ...(responseSchema ? { responseSchema } : {}),
        ...(input.stream ? { onText: (chunk: string) => run.emitChunk(chunk) } : {}),
      });
      if (answer.toolCalls.length === 0) {
        const output: BlockOutput = { content: answer.content, model: model.model, tokens: model.tokens(), cost: await model.cost(), toolCalls };
        if (responseSchema) {
          try {
            output.json = JSON.parse(answer.content);
          } catch {
            throw new WorkflowError("PROVIDER_ERROR", `${model.provider.label} did not answer with the JSON the responseFormat asks for (got ${preview(answer.content)})`, { output });
          }
        }
        return output;
      }
      if (toolCalls.length + answer.toolCalls.length > maxToolCalls) {
        throw new WorkflowError("LIMIT_EXCEEDED", `the model asked for more than ${maxToolCalls} tool calls (maxToolCalls)`, {
          output: { content: answer.content, model: model.model, tokens: model.tokens(), cost: await model.cost(), toolCalls },
        });
      }
      messages.push({ role: "assistant", content: answer.content, toolCalls: answer.toolCalls });
      for (const call of answer.toolCalls) {
        const outcome = await runToolCall(run, tools, call);
        toolCalls.push(outcome.record);
        messages.push({ role: "tool", toolCallId: call.id, name: call.name, content: outcome.content, isError: outcome.isError });
      }
    }
  },
};
