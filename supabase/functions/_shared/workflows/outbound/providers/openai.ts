/**
 * OpenAI-compatible chat completions: `POST {base}/chat/completions` with `Authorization: Bearer`,
 * tools as `functions`, a JSON Schema answer as `response_format: {type: "json_schema"}`, and when
 * streaming, `stream: true` with `stream_options.include_usage` so the last chunk reports the tokens.
 * Usage is `prompt_tokens` / `completion_tokens` of the provider's report; an answer without one is
 * malformed (it could not be billed).
 */
import { WorkflowError } from "../../core/errors.ts";
import { callService, malformed } from "../service-call.ts";
import { toolCall, MODEL_CALL_TIMEOUT_MS, type ChatAnswer, type ChatConnection, type ChatMessage, type ChatProvider, type ChatRequest, type ToolCall } from "./chat.ts";
import { readServerSentEvents } from "./sse-reader.ts";

const LABEL = "OpenAI";

interface WireUsage {
  prompt_tokens?: unknown;
  completion_tokens?: unknown;
}

function errorText(body: unknown): string | null {
  const error = (body as { error?: { message?: unknown } } | null)?.error;
  return typeof error?.message === "string" ? error.message : null;
}

function wireMessages(request: ChatRequest): unknown[] {
  const messages: unknown[] = request.system ? [{ role: "system", content: request.system }] : [];
  for (const message of request.messages) messages.push(wireMessage(message));
  return messages;
}

function wireMessage(message: ChatMessage): unknown {
  switch (message.role) {
    case "user":
      return { role: "user", content: message.content };
    case "assistant":
      return {
        role: "assistant",
        content: message.content || null,
        ...(message.toolCalls.length > 0 ? { tool_calls: message.toolCalls.map((call) => ({ id: call.id, type: "function", function: { name: call.name, arguments: JSON.stringify(call.arguments) } })) } : {}),
      };
    case "tool":
      return { role: "tool", tool_call_id: message.toolCallId, content: message.content };
  }
}

function body(request: ChatRequest): Record<string, unknown> {
  return {
    model: request.model,
    messages: wireMessages(request),
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    ...(request.maxTokens !== undefined ? { max_completion_tokens: request.maxTokens } : {}),
    ...(request.tools?.length ? { tools: request.tools.map((tool) => ({ type: "function", function: { name: tool.name, description: tool.description, parameters: tool.parameters } })) } : {}),
    ...(request.responseSchema ? { response_format: { type: "json_schema", json_schema: { name: "response", schema: request.responseSchema, strict: true } } } : {}),
    ...(request.onText ? { stream: true, stream_options: { include_usage: true } } : {}),
  };
}

function tokens(usage: WireUsage | undefined | null): { promptTokens: number; completionTokens: number } {
  const prompt = usage?.prompt_tokens;
  const completion = usage?.completion_tokens;
  if (!Number.isInteger(prompt) || !Number.isInteger(completion) || (prompt as number) < 0 || (completion as number) < 0) throw malformed(LABEL, "it has no usage report (prompt_tokens, completion_tokens)");
  return { promptTokens: prompt as number, completionTokens: completion as number };
}

async function whole(response: Response): Promise<ChatAnswer> {
  let answer: { choices?: { message?: { content?: unknown; tool_calls?: { id?: unknown; function?: { name?: unknown; arguments?: unknown } }[] }; finish_reason?: unknown }[]; usage?: WireUsage };
  try {
    answer = await response.json();
  } catch {
    throw malformed(LABEL, "its answer is not JSON");
  }
  const choice = answer?.choices?.[0];
  if (!choice?.message) throw malformed(LABEL, "its answer has no choices[0].message");
  const calls: ToolCall[] = (choice.message.tool_calls ?? []).map((call, index) => toolCall(String(call.id ?? `call_${index}`), String(call.function?.name ?? ""), String(call.function?.arguments ?? "")));
  return {
    content: typeof choice.message.content === "string" ? choice.message.content : "",
    toolCalls: calls,
    ...tokens(answer.usage),
    finishReason: typeof choice.finish_reason === "string" ? choice.finish_reason : null,
  };
}

async function streamed(response: Response, onText: (chunk: string) => void, signal: AbortSignal): Promise<ChatAnswer> {
  if (!response.body) throw malformed(LABEL, "the stream has no body");
  let content = "";
  let usage: WireUsage | null = null;
  let finishReason: string | null = null;
  let emitted = false;
  const calls = new Map<number, { id: string; name: string; arguments: string }>();
  try {
    for await (const event of readServerSentEvents(response.body)) {
      if (event.data === "[DONE]") break;
      let chunk: { choices?: { delta?: { content?: unknown; tool_calls?: { index?: number; id?: string; function?: { name?: string; arguments?: string } }[] }; finish_reason?: unknown }[]; usage?: WireUsage | null; error?: { message?: unknown } };
      try {
        chunk = JSON.parse(event.data);
      } catch {
        throw malformed(LABEL, `a stream event is not JSON (${event.data.slice(0, 80)})`);
      }
      if (chunk.error) throw new WorkflowError("PROVIDER_ERROR", `${LABEL} failed while streaming: ${errorText(chunk) ?? "unknown error"}`);
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices?.[0];
      if (!choice) continue;
      if (typeof choice.finish_reason === "string") finishReason = choice.finish_reason;
      const text = choice.delta?.content;
      if (typeof text === "string" && text !== "") {
        content += text;
        emitted = true;
        onText(text);
      }
      for (const delta of choice.delta?.tool_calls ?? []) {
        const index = delta.index ?? 0;
        const call = calls.get(index) ?? { id: "", name: "", arguments: "" };
        if (delta.id) call.id = delta.id;
        if (delta.function?.name) call.name += delta.function.name;
        if (delta.function?.arguments) call.arguments += delta.function.arguments;
        calls.set(index, call);
      }
    }
  } catch (error) {
    // Text already reached the listeners: another attempt would repeat it, so a broken stream is final.
    if (emitted && !(error instanceof WorkflowError) && !signal.aborted) throw new WorkflowError("PROVIDER_ERROR", `${LABEL}'s stream broke off: ${error instanceof Error ? error.message : String(error)}`);
    throw error;
  }
  return {
    content,
    toolCalls: [...calls.entries()].sort(([a], [b]) => a - b).map(([index, call]) => toolCall(call.id || `call_${index}`, call.name, call.arguments)),
    ...tokens(usage),
    finishReason,
  };
}

/** The OpenAI chat-completions protocol. */
export const openAiProvider: ChatProvider = {
  label: LABEL,
  async send(request, connection: ChatConnection) {
    const { value } = await callService(
      {
        service: LABEL,
        url: `${connection.baseUrl.replace(/\/+$/, "")}/chat/completions`,
        method: "POST",
        headers: {
          ...(connection.apiKey ? { authorization: `Bearer ${connection.apiKey}` } : {}),
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
