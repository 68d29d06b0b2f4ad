/**
 * Anthropic messages: `POST {base}/v1/messages` with `x-api-key` and `anthropic-version`, tools as
 * `tools` with `input_schema`, tool results as `tool_result` blocks of a user turn. A JSON Schema
 * answer is asked for as a tool the model must call (`respond`, `tool_choice: any`), whose input is
 * the answer. Streaming reads the SSE events (`message_start` with the input tokens,
 * `content_block_start` / `content_block_delta` with `text_delta` and `input_json_delta`,
 * `message_delta` with the cumulative output tokens and the stop reason, `error`).
 */
import { WorkflowError } from "../../core/errors.ts";
import { callService, malformed } from "../service-call.ts";
import { toolCall, MODEL_CALL_TIMEOUT_MS, type ChatAnswer, type ChatConnection, type ChatMessage, type ChatProvider, type ChatRequest, type ToolCall } from "./chat.ts";
import { readServerSentEvents } from "./sse-reader.ts";

const LABEL = "Anthropic";
/** The API version every request names. */
export const ANTHROPIC_VERSION = "2023-06-01";
/** Anthropic requires max_tokens; this is sent when the block sets none. */
export const DEFAULT_ANTHROPIC_MAX_TOKENS = 4_096;
/** The tool that carries a JSON Schema answer. */
export const RESPOND_TOOL = "respond";

interface WireUsage {
  input_tokens?: unknown;
  output_tokens?: unknown;
  cache_creation_input_tokens?: unknown;
  cache_read_input_tokens?: unknown;
}

function errorText(body: unknown): string | null {
  const error = (body as { error?: { message?: unknown; type?: unknown } } | null)?.error;
  return typeof error?.message === "string" ? error.message : null;
}

function count(value: unknown): number {
  return Number.isInteger(value) && (value as number) >= 0 ? (value as number) : 0;
}

/** Prompt tokens are the input plus what was written to or read from the prompt cache. */
function promptTokensOf(usage: WireUsage): number {
  return count(usage.input_tokens) + count(usage.cache_creation_input_tokens) + count(usage.cache_read_input_tokens);
}

function wireMessages(messages: ChatMessage[]): unknown[] {
  const wire: { role: string; content: unknown[] }[] = [];
  for (const message of messages) {
    if (message.role === "user") wire.push({ role: "user", content: [{ type: "text", text: message.content }] });
    else if (message.role === "assistant") {
      wire.push({
        role: "assistant",
        content: [...(message.content ? [{ type: "text", text: message.content }] : []), ...message.toolCalls.map((call) => ({ type: "tool_use", id: call.id, name: call.name, input: call.arguments }))],
      });
    } else {
      const result = { type: "tool_result", tool_use_id: message.toolCallId, content: message.content, ...(message.isError ? { is_error: true } : {}) };
      // Results of one assistant turn's calls go back together, in one user turn.
      const previous = wire.at(-1);
      if (previous?.role === "user" && previous.content.every((block) => (block as { type: string }).type === "tool_result")) previous.content.push(result);
      else wire.push({ role: "user", content: [result] });
    }
  }
  return wire;
}

function body(request: ChatRequest): Record<string, unknown> {
  const tools = [
    ...(request.tools ?? []).map((tool) => ({ name: tool.name, description: tool.description, input_schema: tool.parameters })),
    ...(request.responseSchema ? [{ name: RESPOND_TOOL, description: "Give the final answer, as the schema says.", input_schema: request.responseSchema }] : []),
  ];
  return {
    model: request.model,
    max_tokens: request.maxTokens ?? DEFAULT_ANTHROPIC_MAX_TOKENS,
    ...(request.system ? { system: request.system } : {}),
    messages: wireMessages(request.messages),
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    ...(tools.length > 0 ? { tools } : {}),
    ...(request.responseSchema ? { tool_choice: { type: "any" } } : {}),
    ...(request.onText ? { stream: true } : {}),
  };
}

/** The answer's tool calls, with a `respond` call turned into the JSON text of the answer. */
function finish(content: string, calls: ToolCall[], promptTokens: number, completionTokens: number, finishReason: string | null): ChatAnswer {
  const respond = calls.find((call) => call.name === RESPOND_TOOL);
  if (respond) return { content: JSON.stringify(respond.arguments), toolCalls: [], promptTokens, completionTokens, finishReason };
  return { content, toolCalls: calls, promptTokens, completionTokens, finishReason };
}

async function whole(response: Response): Promise<ChatAnswer> {
  let answer: { content?: { type?: unknown; text?: unknown; id?: unknown; name?: unknown; input?: unknown }[]; usage?: WireUsage; stop_reason?: unknown };
  try {
    answer = await response.json();
  } catch {
    throw malformed(LABEL, "its answer is not JSON");
  }
  if (!Array.isArray(answer?.content)) throw malformed(LABEL, "its answer has no content");
  if (!answer.usage || !Number.isInteger(answer.usage.input_tokens) || !Number.isInteger(answer.usage.output_tokens)) throw malformed(LABEL, "it has no usage report (input_tokens, output_tokens)");
  let text = "";
  const calls: ToolCall[] = [];
  for (const block of answer.content) {
    if (block.type === "text" && typeof block.text === "string") text += block.text;
    if (block.type === "tool_use") calls.push(toolCall(String(block.id ?? ""), String(block.name ?? ""), JSON.stringify(block.input ?? {})));
  }
  return finish(text, calls, promptTokensOf(answer.usage), count(answer.usage.output_tokens), typeof answer.stop_reason === "string" ? answer.stop_reason : null);
}

async function streamed(response: Response, onText: (chunk: string) => void, signal: AbortSignal): Promise<ChatAnswer> {
  if (!response.body) throw malformed(LABEL, "the stream has no body");
  let text = "";
  let promptTokens: number | null = null;
  let completionTokens = 0;
  let finishReason: string | null = null;
  let emitted = false;
  let stopped = false;
  const blocks = new Map<number, { type: string; id: string; name: string; json: string }>();
  try {
    for await (const event of readServerSentEvents(response.body)) {
      let data: {
        type?: string;
        index?: number;
        message?: { usage?: WireUsage };
        content_block?: { type?: string; id?: string; name?: string };
        delta?: { type?: string; text?: string; partial_json?: string; stop_reason?: string };
        usage?: WireUsage;
        error?: { message?: unknown };
      };
      try {
        data = JSON.parse(event.data);
      } catch {
        throw malformed(LABEL, `a stream event is not JSON (${event.data.slice(0, 80)})`);
      }
      switch (data.type ?? event.event) {
        case "message_start":
          promptTokens = promptTokensOf(data.message?.usage ?? {});
          completionTokens = count(data.message?.usage?.output_tokens);
          break;
        case "content_block_start":
          blocks.set(data.index ?? 0, { type: data.content_block?.type ?? "", id: data.content_block?.id ?? "", name: data.content_block?.name ?? "", json: "" });
          break;
        case "content_block_delta": {
          const block = blocks.get(data.index ?? 0);
          if (data.delta?.type === "text_delta" && typeof data.delta.text === "string") {
            text += data.delta.text;
            emitted = true;
            onText(data.delta.text);
          } else if (data.delta?.type === "input_json_delta" && block) block.json += data.delta.partial_json ?? "";
          break;
        }
        case "message_delta":
          // Output tokens in message_delta are the running total, not an increment.
          if (data.usage?.output_tokens !== undefined) completionTokens = count(data.usage.output_tokens);
          if (typeof data.delta?.stop_reason === "string") finishReason = data.delta.stop_reason;
          break;
        case "message_stop":
          stopped = true;
          break;
        case "error":
          throw new WorkflowError("PROVIDER_ERROR", `${LABEL} failed while streaming: ${errorText(data) ?? "unknown error"}`);
      }
      if (stopped) break;
    }
  } catch (error) {
    if (emitted && !(error instanceof WorkflowError) && !signal.aborted) throw new WorkflowError("PROVIDER_ERROR", `${LABEL}'s stream broke off: ${error instanceof Error ? error.message : String(error)}`);
    throw error;
  }
  if (promptTokens === null) throw malformed(LABEL, "the stream has no message_start with a usage report");
  if (!stopped) throw malformed(LABEL, "the stream ended without message_stop");
  const calls = [...blocks.entries()]
    .sort(([a], [b]) => a - b)
    .filter(([, block]) => block.type === "tool_use")
    .map(([, block]) => toolCall(block.id, block.name, block.json));
  return finish(text, calls, promptTokens, completionTokens, finishReason);
}

/** The Anthropic messages protocol. */
export const anthropicProvider: ChatProvider = {
  label: LABEL,
  async send(request, connection: ChatConnection) {
    const { value } = await callService(
      {
        service: LABEL,
        url: `${connection.baseUrl.replace(/\/+$/, "")}/v1/messages`,
        method: "POST",
        headers: {
          "anthropic-version": ANTHROPIC_VERSION,
          ...(connection.apiKey ? { "x-api-key": connection.apiKey } : {}),
          ...(request.onText ? { accept: "text/event-stream" } : {}),
        },
        body: body(request),
        fetch: connection.fetch,
        signal: connection.signal,
        deadline: connection.deadline,
        sleep: connection.sleep,
        timeoutMs: MODEL_CALL_TIMEOUT_MS,
        errorText,
      },
      (response) => (request.onText ? streamed(response, request.onText, connection.signal) : whole(response)),
    );
    return value;
  },
};
