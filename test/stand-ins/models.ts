/**
 * Model providers on this machine, speaking their real wire protocols:
 *  - OpenAI chat completions: `POST /v1/chat/completions`, `Authorization: Bearer`, answers
 *    `chat.completion` objects or, with `stream: true`, `chat.completion.chunk` SSE ending in
 *    `data: [DONE]`, with the usage chunk (`choices: []`) when `stream_options.include_usage` is set;
 *    tool calls as `tool_calls` (streamed as index/id/name first, then argument fragments); errors
 *    `{error: {message, type, param, code}}`.
 *  - Anthropic messages: `POST /v1/messages`, `x-api-key` and `anthropic-version` required,
 *    `max_tokens` required; answers `message` objects or the SSE events message_start,
 *    content_block_start/delta/stop (text_delta, input_json_delta), ping, message_delta (stop
 *    reason, cumulative output tokens), message_stop; errors `{type: "error", error: {type, message}}`.
 * Replies are scripted per call (`reply(...)`): text (streamed word by word, or in the given
 * `chunks`) and tool calls with exact token counts, an
 * HTTP failure (429 with Retry-After, 500, 529 …), a malformed body, a stream that breaks off.
 * Without a script each call answers "Hello from the stand-in." with 12 prompt and 5 completion
 * tokens. Every request is recorded.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** What the next call answers. */
export type ModelReply =
  | { text?: string; toolCalls?: { name: string; arguments: Record<string, unknown> }[]; usage?: { prompt: number; completion: number }; chunks?: string[] }
  | { fail: number; message?: string; retryAfter?: number }
  | { malformed: string }
  | { breakAfterChunks: number; text: string };

/** One request as the provider received it. */
export interface ModelRequest {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
}

/** A running stand-in. */
export interface ModelStandIn {
  /** The base URL a client configures: `…/v1` for OpenAI, the origin for Anthropic. */
  baseUrl: string;
  port: number;
  requests: ModelRequest[];
  /** Queues replies for the next calls, in order. */
  reply(...replies: ModelReply[]): void;
  /** Wait between streamed chunks (default 5 ms), so tests can see them arrive one by one. */
  chunkDelayMs: number;
  close(): Promise<void>;
}

const DEFAULT_REPLY = { text: "Hello from the stand-in.", usage: { prompt: 12, completion: 5 } };

function readJson(request: IncomingMessage): Promise<{ body: Record<string, unknown> | null; raw: string }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      try {
        resolve({ body: JSON.parse(raw) as Record<string, unknown>, raw });
      } catch {
        resolve({ body: null, raw });
      }
    });
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Splits text into streamed pieces: each word with the space before it. */
function pieces(text: string): string[] {
  return text.match(/\s*\S+/g) ?? (text ? [text] : []);
}

/** A reply to give, filled in. */
interface Reply {
  text: string;
  pieces: string[];
  toolCalls: { name: string; arguments: Record<string, unknown> }[];
  usage: { prompt: number; completion: number };
}

interface Flavour {
  path: string;
  authorised(request: IncomingMessage, keys: readonly string[]): { status: number; body: unknown } | null;
  error(status: number, message: string): unknown;
  whole(body: Record<string, unknown>, reply: Reply, id: number): unknown;
  stream(response: ServerResponse, body: Record<string, unknown>, reply: Reply, id: number, delay: number, breakAfter: number | null): Promise<void>;
}

const openAi: Flavour = {
  path: "/v1/chat/completions",
  authorised(request, keys) {
    const header = request.headers.authorization ?? "";
    const key = header.startsWith("Bearer ") ? header.slice(7) : "";
    if (keys.includes(key)) return null;
    return { status: 401, body: { error: { message: `Incorrect API key provided: ${key.slice(0, 3)}***${key.slice(-4)}. You can find your API key at https://platform.openai.com/account/api-keys.`, type: "invalid_request_error", param: null, code: "invalid_api_key" } } };
  },
  error: (status, message) => ({ error: { message, type: status === 429 ? "requests" : status >= 500 ? "server_error" : "invalid_request_error", param: null, code: status === 429 ? "rate_limit_exceeded" : null } }),
  whole(body, reply, id) {
    const calls = reply.toolCalls.map((call, index) => ({ id: `call_${id}_${index}`, type: "function", function: { name: call.name, arguments: JSON.stringify(call.arguments) } }));
    return {
      id: `chatcmpl-${id}`,
      object: "chat.completion",
      created: 1_760_000_000,
      model: `${String(body.model)}-2025-01-01`,
      choices: [{ index: 0, message: { role: "assistant", content: reply.text || null, refusal: null, ...(calls.length ? { tool_calls: calls } : {}) }, logprobs: null, finish_reason: calls.length ? "tool_calls" : "stop" }],
      usage: { prompt_tokens: reply.usage.prompt, completion_tokens: reply.usage.completion, total_tokens: reply.usage.prompt + reply.usage.completion },
      system_fingerprint: "fp_stand_in",
    };
  },
  async stream(response, body, reply, id, delay, breakAfter) {
    const base = { id: `chatcmpl-${id}`, object: "chat.completion.chunk", created: 1_760_000_000, model: `${String(body.model)}-2025-01-01`, system_fingerprint: "fp_stand_in" };
    const events: unknown[] = [{ ...base, choices: [{ index: 0, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null }] }];
    for (const piece of reply.pieces) events.push({ ...base, choices: [{ index: 0, delta: { content: piece }, logprobs: null, finish_reason: null }] });
    reply.toolCalls.forEach((call, index) => {
      const args = JSON.stringify(call.arguments);
      const half = Math.floor(args.length / 2);
      events.push({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index, id: `call_${id}_${index}`, type: "function", function: { name: call.name, arguments: "" } }] }, logprobs: null, finish_reason: null }] });
      events.push({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index, function: { arguments: args.slice(0, half) } }] }, logprobs: null, finish_reason: null }] });
      events.push({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index, function: { arguments: args.slice(half) } }] }, logprobs: null, finish_reason: null }] });
    });
    events.push({ ...base, choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: reply.toolCalls.length ? "tool_calls" : "stop" }] });
    if ((body.stream_options as { include_usage?: boolean } | undefined)?.include_usage) {
      events.push({ ...base, choices: [], usage: { prompt_tokens: reply.usage.prompt, completion_tokens: reply.usage.completion, total_tokens: reply.usage.prompt + reply.usage.completion } });
    }
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    let sent = 0;
    for (const event of events) {
      if (breakAfter !== null && sent === breakAfter) return void response.socket?.destroy();
      response.write(`data: ${JSON.stringify(event)}\n\n`);
      sent++;
      await sleep(delay);
    }
    response.end("data: [DONE]\n\n");
  },
};

const anthropic: Flavour = {
  path: "/v1/messages",
  authorised(request, keys) {
    if (!request.headers["anthropic-version"]) return { status: 400, body: { type: "error", error: { type: "invalid_request_error", message: "anthropic-version: header is required" } } };
    if (keys.includes(String(request.headers["x-api-key"] ?? ""))) return null;
    return { status: 401, body: { type: "error", error: { type: "authentication_error", message: "invalid x-api-key" } } };
  },
  error: (status, message) => ({ type: "error", error: { type: status === 429 ? "rate_limit_error" : status === 529 ? "overloaded_error" : status >= 500 ? "api_error" : "invalid_request_error", message } }),
  whole(body, reply, id) {
    return {
      id: `msg_${id}`,
      type: "message",
      role: "assistant",
      model: String(body.model),
      content: [...(reply.text ? [{ type: "text", text: reply.text }] : []), ...reply.toolCalls.map((call, index) => ({ type: "tool_use", id: `toolu_${id}_${index}`, name: call.name, input: call.arguments }))],
      stop_reason: reply.toolCalls.length ? "tool_use" : "end_turn",
      stop_sequence: null,
      usage: { input_tokens: reply.usage.prompt, output_tokens: reply.usage.completion },
    };
  },
  async stream(response, body, reply, id, delay, breakAfter) {
    const events: [string, unknown][] = [
      ["message_start", { type: "message_start", message: { id: `msg_${id}`, type: "message", role: "assistant", content: [], model: String(body.model), stop_reason: null, stop_sequence: null, usage: { input_tokens: reply.usage.prompt, output_tokens: 1 } } }],
    ];
    let index = 0;
    if (reply.text) {
      events.push(["content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } }], ["ping", { type: "ping" }]);
      for (const piece of reply.pieces) events.push(["content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text: piece } }]);
      events.push(["content_block_stop", { type: "content_block_stop", index }]);
      index++;
    }
    reply.toolCalls.forEach((call, callIndex) => {
      const args = JSON.stringify(call.arguments);
      const half = Math.floor(args.length / 2);
      events.push(
        ["content_block_start", { type: "content_block_start", index, content_block: { type: "tool_use", id: `toolu_${id}_${callIndex}`, name: call.name, input: {} } }],
        ["content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: args.slice(0, half) } }],
        ["content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: args.slice(half) } }],
        ["content_block_stop", { type: "content_block_stop", index }],
      );
      index++;
    });
    // The output count grows over the stream; the last message_delta holds the total.
    events.push(["message_delta", { type: "message_delta", delta: { stop_reason: reply.toolCalls.length ? "tool_use" : "end_turn", stop_sequence: null }, usage: { output_tokens: Math.max(1, reply.usage.completion - 1) } }]);
    events.push(["message_delta", { type: "message_delta", delta: {}, usage: { output_tokens: reply.usage.completion } }]);
    events.push(["message_stop", { type: "message_stop" }]);
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    let sent = 0;
    for (const [name, data] of events) {
      if (breakAfter !== null && sent === breakAfter) return void response.socket?.destroy();
      response.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
      sent++;
      await sleep(delay);
    }
    response.end();
  },
};

async function start(flavour: Flavour, keys: readonly string[], port: number): Promise<ModelStandIn> {
  const queue: ModelReply[] = [];
  const requests: ModelRequest[] = [];
  let calls = 0;
  const standIn: ModelStandIn = {
    baseUrl: "",
    port: 0,
    requests,
    chunkDelayMs: 5,
    reply: (...replies) => queue.push(...replies),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server: Server = createServer(async (request, response) => {
    const { body, raw } = await readJson(request);
    const url = new URL(request.url ?? "/", "http://stand-in");
    requests.push({ path: url.pathname, headers: request.headers, body: body ?? { raw } });
    const send = (status: number, payload: unknown, headers: Record<string, string> = {}) => response.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(payload));
    if (request.method !== "POST" || url.pathname !== flavour.path) return send(404, flavour.error(404, `Unknown request URL: ${request.method} ${url.pathname}`));
    const refused = flavour.authorised(request, keys);
    if (refused) return send(refused.status, refused.body);
    if (!body) return send(400, flavour.error(400, "We could not parse the JSON body of your request."));
    if (flavour === anthropic && typeof body.max_tokens !== "number") return send(400, flavour.error(400, "max_tokens: Field required"));
    const next = queue.shift() ?? DEFAULT_REPLY;
    const id = ++calls;
    if ("fail" in next) return send(next.fail, flavour.error(next.fail, next.message ?? `stand-in failure ${next.fail}`), next.retryAfter !== undefined ? { "retry-after": String(next.retryAfter) } : {});
    if ("malformed" in next) {
      response.writeHead(200, { "content-type": "application/json" }).end(next.malformed);
      return;
    }
    const breakAfter = "breakAfterChunks" in next ? next.breakAfterChunks : null;
    const chunks = "chunks" in next ? next.chunks : undefined;
    const text = chunks ? chunks.join("") : (next.text ?? "");
    const reply: Reply = { text, pieces: chunks ?? pieces(text), toolCalls: "toolCalls" in next ? (next.toolCalls ?? []) : [], usage: "usage" in next && next.usage ? next.usage : DEFAULT_REPLY.usage };
    if (body.stream === true) return void (await flavour.stream(response, body, reply, id, standIn.chunkDelayMs, breakAfter));
    send(200, flavour.whole(body, reply, id));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", resolve);
  });
  standIn.port = (server.address() as AddressInfo).port;
  standIn.baseUrl = flavour === openAi ? `http://127.0.0.1:${standIn.port}/v1` : `http://127.0.0.1:${standIn.port}`;
  return standIn;
}

/** An OpenAI-compatible server accepting these keys, on `port` (0: any free port). */
export function startOpenAiStandIn(keys: readonly string[], port = 0): Promise<ModelStandIn> {
  return start(openAi, keys, port);
}

/** An Anthropic messages server accepting these keys, on `port` (0: any free port). */
export function startAnthropicStandIn(keys: readonly string[], port = 0): Promise<ModelStandIn> {
  return start(anthropic, keys, port);
}
