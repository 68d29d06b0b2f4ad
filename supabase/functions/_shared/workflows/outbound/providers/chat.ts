/**
 * The conversation a block has with a model, in one shape whatever the provider: messages, the
 * tools the model may call, an optional JSON Schema its answer must follow, and the answer (text,
 * tool calls, token usage as the provider reported it).
 */
import type { OutboundFetch } from "../services.ts";

/** A tool call the model asked for. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
  /** Set when the model's arguments were not a JSON object (`arguments` is then empty). */
  argumentsError?: string;
}

/** One turn of the conversation. */
export type ChatMessage =
  | { role: "user"; content: string }
  | { role: "assistant"; content: string; toolCalls: ToolCall[] }
  | { role: "tool"; toolCallId: string; name: string; content: string; isError: boolean };

/** A tool the model may call: its name, what it does, the JSON Schema of its arguments. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** What to ask. */
export interface ChatRequest {
  model: string;
  system?: string;
  messages: ChatMessage[];
  temperature?: number;
  maxTokens?: number;
  tools?: ToolSpec[];
  /** The answer must be JSON following this schema. */
  responseSchema?: Record<string, unknown>;
  /** Receives text as it streams; the request streams when set. */
  onText?: (chunk: string) => void;
}

/** The model's answer. */
export interface ChatAnswer {
  content: string;
  toolCalls: ToolCall[];
  promptTokens: number;
  completionTokens: number;
  /** Why the model stopped (`stop`, `end_turn`, `tool_calls`, `length`, …), as the provider says. */
  finishReason: string | null;
}

/** Where and how to send it. */
export interface ChatConnection {
  baseUrl: string;
  /** Null: no key is sent (a local server that needs none). */
  apiKey: string | null;
  fetch: OutboundFetch;
  signal: AbortSignal;
  deadline: number;
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

/** A provider's wire protocol. */
export interface ChatProvider {
  /** Its name in messages ("OpenAI", "Anthropic"). */
  label: string;
  send(request: ChatRequest, connection: ChatConnection): Promise<ChatAnswer>;
}

/** Per attempt: models can be slow to start answering. */
export const MODEL_CALL_TIMEOUT_MS = 120_000;

/** A tool call from the model's JSON text of arguments; text that is not a JSON object becomes an error the model is told about. */
export function toolCall(id: string, name: string, argumentsText: string): ToolCall {
  if (argumentsText.trim() === "") return { id, name, arguments: {} };
  try {
    const value: unknown = JSON.parse(argumentsText);
    if (value !== null && typeof value === "object" && !Array.isArray(value)) return { id, name, arguments: value as Record<string, unknown> };
  } catch {
    // Reported below.
  }
  return { id, name, arguments: {}, argumentsError: `the arguments must be a JSON object (got ${argumentsText.slice(0, 200)})` };
}
