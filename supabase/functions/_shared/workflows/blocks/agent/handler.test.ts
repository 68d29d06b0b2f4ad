import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startMisbehavingServer, type MisbehavingServer } from "../../../../../../test/stand-ins/misbehaving-http.ts";
import { startAnthropicStandIn, startOpenAiStandIn, type ModelStandIn } from "../../../../../../test/stand-ins/models.ts";
import { standInOutbound, type StandInCost } from "../../../../../../test/stand-ins/outbound.ts";
import { startQdrantStandIn, type QdrantStandIn } from "../../../../../../test/stand-ins/qdrant.ts";
import { WorkflowError } from "../../core/errors.ts";
import type { ModelPricing, ModelUsage } from "../../outbound/model-cost.ts";
import { testRun } from "../../../../../../test/helpers/workflows/block-run.ts";
import type { AgentInput } from "./config.ts";
import { agentHandler } from "./handler.ts";

const HOSTED_OPENAI = "sk-hosted-openai-0000000000";
const HOSTED_ANTHROPIC = "sk-ant-hosted-000000000000";
const OWN_KEY = "sk-own-key-1111111111111111";
/** What the database answers for the usages below (gpt-4o at $2.50 / $10, claude-sonnet-4-5 at $3 / $15, hosted 2.5×). */
const COSTS: StandInCost[] = [
  { usage: { model: "gpt-4o", promptTokens: 1000, completionTokens: 500, ownKey: false }, cost: { input: 0.00625, output: 0.0125, total: 0.01875 } },
  { usage: { model: "gpt-4o", promptTokens: 1000, completionTokens: 500, ownKey: true }, cost: { input: 0.0025, output: 0.005, total: 0.0075 } },
  { usage: { model: "claude-sonnet-4-5", promptTokens: 2000, completionTokens: 300, ownKey: false }, cost: { input: 0.015, output: 0.01125, total: 0.02625 } },
  { usage: { model: "claude-sonnet-4-5", promptTokens: 9, completionTokens: 6, ownKey: true }, cost: { input: 0.000027, output: 0.00009, total: 0.000117 } },
];

let openai: ModelStandIn;
let anthropic: ModelStandIn;
let target: MisbehavingServer;
let store: QdrantStandIn;
beforeAll(async () => {
  openai = await startOpenAiStandIn([HOSTED_OPENAI, OWN_KEY, ""]);
  anthropic = await startAnthropicStandIn([HOSTED_ANTHROPIC, OWN_KEY]);
  target = await startMisbehavingServer();
  store = await startQdrantStandIn();
});
afterAll(async () => {
  await Promise.all([openai.close(), anthropic.close(), target.close(), store.close()]);
});
beforeEach(() => {
  openai.requests.length = 0;
  anthropic.requests.length = 0;
});

function agent(input: Partial<AgentInput>, options: { hosted?: boolean; pricing?: ModelPricing } = {}) {
  const chunks: string[] = [];
  const usage: ModelUsage[] = [];
  const base = testRun<AgentInput>({ model: "gpt-4o", userPrompt: "Hi", ...input }, { deadline: Date.now() + 20_000 });
  const providers = {
    openai: { baseUrl: openai.baseUrl, apiKey: options.hosted === false ? null : HOSTED_OPENAI },
    anthropic: { baseUrl: anthropic.baseUrl, apiKey: options.hosted === false ? null : HOSTED_ANTHROPIC },
  };
  const output = Promise.resolve(agentHandler.execute({
    ...base,
    services: { ...base.services, outbound: { ...standInOutbound({ providers, costs: COSTS }), ...(options.pricing ? { pricing: options.pricing } : {}) } },
    emitChunk: (chunk) => chunks.push(chunk),
    recordModelUsage: (entry) => usage.push(entry),
  }));
  return { output, chunks, usage };
}

async function failure(input: Partial<AgentInput>, options?: { hosted?: boolean; pricing?: ModelPricing }): Promise<WorkflowError> {
  const error = await agent(input, options).output.then(
    () => null,
    (caught: unknown) => caught,
  );
  if (!(error instanceof WorkflowError)) throw new Error(`expected a WorkflowError, got ${String(error)}`);
  return error;
}

describe("Agent on OpenAI chat completions", () => {
  it("sends the prompts and settings with the hosted key, and reports content, tokens and the hosted cost", async () => {
    openai.reply({ text: "Olá, Ana!", usage: { prompt: 1000, completion: 500 } });
    const { output, usage } = agent({ systemPrompt: "Be brief.", userPrompt: "Greet <api.name>", temperature: 0.2, maxTokens: 300 });
    expect(await output).toEqual({
      content: "Olá, Ana!",
      model: "gpt-4o",
      tokens: { prompt: 1000, completion: 500, total: 1500 },
      // (1000 × 2.50 + 500 × 10.00) / 1,000,000 × 2.5 for the hosted key
      cost: { input: 0.00625, output: 0.0125, total: 0.01875 },
      toolCalls: [],
    });
    expect(openai.requests).toHaveLength(1);
    expect(openai.requests[0].path).toBe("/v1/chat/completions");
    expect(openai.requests[0].headers.authorization).toBe(`Bearer ${HOSTED_OPENAI}`);
    expect(openai.requests[0].body).toEqual({
      model: "gpt-4o",
      messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Greet <api.name>" }],
      temperature: 0.2,
      max_completion_tokens: 300,
    });
    expect(usage).toEqual([{ model: "gpt-4o", promptTokens: 1000, completionTokens: 500, ownKey: false }]);
  });

  it("uses the user's own key at the base price", async () => {
    openai.reply({ text: "ok", usage: { prompt: 1000, completion: 500 } });
    const { output, usage } = agent({ apiKey: OWN_KEY });
    expect(await output).toMatchObject({ cost: { input: 0.0025, output: 0.005, total: 0.0075 } });
    expect(openai.requests[0].headers.authorization).toBe(`Bearer ${OWN_KEY}`);
    expect(usage).toEqual([{ model: "gpt-4o", promptTokens: 1000, completionTokens: 500, ownKey: true }]);
  });

  it("never sends the hosted key to an endpoint the block chose", async () => {
    const { output, usage } = agent({ baseUrl: openai.baseUrl, model: "local-llama", provider: "openai" });
    expect(await output).toMatchObject({ content: "Hello from the stand-in.", cost: { total: 0 } });
    expect(openai.requests[0].headers.authorization).toBeUndefined();
    expect(usage[0].ownKey).toBe(true);
  });

  it("names what is missing: a key, or the provider of an unknown model", async () => {
    expect((await failure({}, { hosted: false })).message).toBe("no OpenAI key: set apiKey in the block (your own key), or OPENAI_API_KEY on the server");
    expect((await failure({ model: "llama3" })).message).toBe('the provider of model "llama3" is not known from its name: set provider (openai or anthropic)');
    expect((await failure({ userPrompt: "" })).message).toBe("userPrompt is empty");
    expect((await failure({ temperature: 3 })).message).toBe("temperature must be a number from 0 to 2 (got 3)");
  });

  it("streams the answer's text to the run in order, and takes tokens from the usage chunk", async () => {
    openai.reply({ text: "one two three four", usage: { prompt: 7, completion: 4 } });
    const { output, chunks } = agent({ stream: true });
    const result = await output;
    expect(chunks).toEqual(["one", " two", " three", " four"]);
    expect(result).toMatchObject({ content: "one two three four", tokens: { prompt: 7, completion: 4, total: 11 } });
    expect(openai.requests[0].body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it("asks for a JSON Schema answer and hands it back parsed", async () => {
    const schema = { type: "object", properties: { mood: { type: "string" } }, required: ["mood"], additionalProperties: false };
    openai.reply({ text: '{"mood":"happy"}' });
    const result = await agent({ responseFormat: schema }).output;
    expect(result).toMatchObject({ content: '{"mood":"happy"}', json: { mood: "happy" } });
    expect(openai.requests[0].body.response_format).toEqual({ type: "json_schema", json_schema: { name: "response", schema, strict: true } });
    openai.reply({ text: "not json" });
    const error = await failure({ responseFormat: JSON.stringify(schema) });
    expect(error).toMatchObject({ code: "PROVIDER_ERROR", message: 'OpenAI did not answer with the JSON the responseFormat asks for (got "not json")' });
  });
});

describe("Agent on Anthropic messages", () => {
  it("sends x-api-key, anthropic-version, system and a default max_tokens, and prices the Anthropic usage", async () => {
    anthropic.reply({ text: "Bom dia.", usage: { prompt: 2000, completion: 300 } });
    const { output, usage } = agent({ model: "claude-sonnet-4-5", systemPrompt: "Portuguese only." });
    expect(await output).toEqual({
      content: "Bom dia.",
      model: "claude-sonnet-4-5",
      tokens: { prompt: 2000, completion: 300, total: 2300 },
      cost: { input: 0.015, output: 0.01125, total: 0.02625 },
      toolCalls: [],
    });
    const request = anthropic.requests[0];
    expect(request.path).toBe("/v1/messages");
    expect(request.headers["x-api-key"]).toBe(HOSTED_ANTHROPIC);
    expect(request.headers["anthropic-version"]).toBe("2023-06-01");
    expect(request.body).toEqual({ model: "claude-sonnet-4-5", max_tokens: 4096, system: "Portuguese only.", messages: [{ role: "user", content: [{ type: "text", text: "Hi" }] }] });
    expect(usage).toEqual([{ model: "claude-sonnet-4-5", promptTokens: 2000, completionTokens: 300, ownKey: false }]);
  });

  it("streams text deltas in order and takes the last cumulative output count", async () => {
    anthropic.reply({ text: "alpha beta gamma", usage: { prompt: 9, completion: 6 } });
    const { output, chunks } = agent({ model: "claude-sonnet-4-5", stream: true, apiKey: OWN_KEY });
    expect(await output).toMatchObject({ content: "alpha beta gamma", tokens: { prompt: 9, completion: 6, total: 15 }, cost: { input: 0.000027, output: 0.00009, total: 0.000117 } });
    expect(chunks).toEqual(["alpha", " beta", " gamma"]);
  });

  it("asks for a JSON Schema answer through a tool the model must call", async () => {
    anthropic.reply({ toolCalls: [{ name: "respond", arguments: { mood: "calm" } }] });
    const result = await agent({ model: "claude-sonnet-4-5", responseFormat: { type: "object", properties: { mood: { type: "string" } } } }).output;
    expect(result).toMatchObject({ json: { mood: "calm" }, content: '{"mood":"calm"}' });
    expect(anthropic.requests[0].body).toMatchObject({ tool_choice: { type: "any" }, tools: [{ name: "respond", input_schema: { type: "object", properties: { mood: { type: "string" } } } }] });
  });
});

describe("Agent tools", () => {
  it("lets the model call an API tool, sends it the answer, and lists the call", async () => {
    openai.reply(
      { toolCalls: [{ name: "lookup", arguments: { query: { city: "Recife" }, url: "http://10.0.0.1/ignored" } }], usage: { prompt: 50, completion: 10 } },
      { text: "It is sunny in Recife.", usage: { prompt: 80, completion: 8 } },
    );
    const { output, usage } = agent({ tools: [{ name: "lookup", description: "Weather by city", type: "api", config: { url: `${target.url}/echo`, headers: { Authorization: "Bearer tool-token-123456" } } }] });
    const result = await output;
    expect(result).toMatchObject({ content: "It is sunny in Recife.", tokens: { prompt: 130, completion: 18, total: 148 } });
    const calls = result.toolCalls as { name: string; arguments: unknown; result: { status: number; data: { query: unknown; headers: Record<string, string> } } }[];
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ name: "lookup", arguments: { query: { city: "Recife" }, url: "http://10.0.0.1/ignored" }, result: { status: 200, data: { query: { city: "Recife" } } } });
    // The URL is fixed by the tool's config: the model's url went nowhere.
    expect(calls[0].result.data.headers.authorization).toBe("Bearer tool-token-123456");
    expect(openai.requests[0].body.tools).toEqual([
      {
        type: "function",
        function: {
          name: "lookup",
          description: "Weather by city",
          parameters: {
            type: "object",
            properties: {
              method: { type: "string", enum: ["GET", "POST", "PUT", "DELETE", "PATCH"] },
              pathParams: { type: "object", additionalProperties: { type: ["string", "number", "boolean"] }, description: "Values for {name} placeholders in the URL" },
              query: { type: "object", additionalProperties: { type: ["string", "number", "boolean"] }, description: "Query parameters" },
              body: { type: "object", description: "JSON body (POST, PUT, PATCH)" },
            },
            required: [],
          },
        },
      },
    ]);
    const second = openai.requests[1].body.messages as Record<string, unknown>[];
    const callId = ((second[1].tool_calls as { id: string }[])[0] ?? { id: "" }).id;
    expect(callId).toMatch(/^call_\d+_0$/);
    expect(second[1]).toEqual({ role: "assistant", content: null, tool_calls: [{ id: callId, type: "function", function: { name: "lookup", arguments: JSON.stringify({ query: { city: "Recife" }, url: "http://10.0.0.1/ignored" }) } }] });
    expect(second[2]).toMatchObject({ role: "tool", tool_call_id: callId });
    expect(JSON.parse(second[2].content as string)).toMatchObject({ status: 200, error: null });
    expect(usage).toHaveLength(2);
  });

  it("tells the model when a tool fails, and goes on", async () => {
    anthropic.reply({ toolCalls: [{ name: "fetch", arguments: {} }] }, { text: "The service is down." });
    const result = await agent({ model: "claude-sonnet-4-5", tools: [{ name: "fetch", type: "api", config: { url: `${target.url}/status/404` } }] }).output;
    expect(result).toMatchObject({ content: "The service is down.", toolCalls: [{ name: "fetch", code: "HTTP_ERROR", error: `GET ${target.url}/status/404 answered 404 Not Found` }] });
    const [, assistant, turn] = anthropic.requests[1].body.messages as { role: string; content: { type: string; id?: string; is_error?: boolean; tool_use_id?: string }[] }[];
    expect(assistant).toMatchObject({ role: "assistant", content: [{ type: "tool_use", name: "fetch", input: {} }] });
    expect(turn).toMatchObject({ role: "user", content: [{ type: "tool_result", tool_use_id: assistant.content[0].id, is_error: true }] });
  });

  it("searches a vector store for the model", async () => {
    store.createCollection("docs", 2);
    openai.reply({ toolCalls: [{ name: "upsert", arguments: { points: [{ id: 1, vector: [1, 0], payload: { text: "refund policy" } }] } }] }, { toolCalls: [{ name: "search", arguments: { vector: [1, 0], limit: 1 } }] }, { text: "Found the refund policy." });
    const tools = [
      { name: "upsert", type: "vectordb" as const, config: { operation: "vectordb_upsert_points", url: store.url, collection: "docs" } },
      { name: "search", type: "vectordb" as const, config: { operation: "vectordb_search_vector", url: store.url, collection: "docs" } },
    ];
    const result = await agent({ tools }).output;
    expect(result.toolCalls).toMatchObject([{ name: "upsert", result: { status: "ok" } }, { name: "search", result: { status: "ok", data: [{ id: 1, score: 1, payload: { text: "refund policy" } }] } }]);
    expect((openai.requests[0].body.tools as { function: { parameters: unknown } }[])[1].function.parameters).toEqual({
      type: "object",
      properties: { vector: { type: "array", items: { type: "number" } }, limit: { type: "integer", minimum: 1, maximum: 1000 }, filter: { type: "object", description: "A Qdrant filter: {must, should, must_not} of {key, match} or {key, range}" } },
      required: ["vector"],
    });
  });

  it("refuses unknown tools and bad arguments back to the model, and stops at maxToolCalls", async () => {
    openai.reply({ toolCalls: [{ name: "nope", arguments: {} }] }, { toolCalls: [{ name: "fetch", arguments: { method: "TRACE" } }] }, { text: "done" });
    const result = await agent({ tools: [{ name: "fetch", type: "api", config: { url: `${target.url}/json` } }] }).output;
    expect(result.toolCalls).toMatchObject([
      { name: "nope", code: "UNKNOWN_TOOL", error: 'there is no tool named "nope"' },
      { name: "fetch", code: "INVALID_ARGUMENTS" },
    ]);
    openai.reply({ toolCalls: [{ name: "fetch", arguments: {} }, { name: "fetch", arguments: {} }] });
    const error = await failure({ maxToolCalls: 1, tools: [{ name: "fetch", type: "api", config: { url: `${target.url}/json` } }] });
    expect(error).toMatchObject({ code: "LIMIT_EXCEEDED", message: "the model asked for more than 1 tool calls (maxToolCalls)" });
  });

  it("names the block's credentials as secrets: its key and its tools'", () => {
    expect(agentHandler.secretsOf?.({ model: "gpt-4o", userPrompt: "x", apiKey: OWN_KEY, tools: [{ name: "a", type: "api", config: { url: "x", headers: { "X-Api-Key": "tool-key-1" } } }, { name: "b", type: "vectordb", config: { operation: "vectordb_fetch_points", apiKey: "qdrant-key-2" } }] })).toEqual([OWN_KEY, "tool-key-1", "qdrant-key-2"]);
  });
});

describe("Agent faults", () => {
  it("reports the provider's own error text", async () => {
    const error = await failure({ apiKey: "sk-wrong-key-999999" });
    expect(error.code).toBe("PROVIDER_ERROR");
    expect(error.message).toMatch(/^OpenAI answered 401: Incorrect API key provided/);
    const anthropicError = await failure({ model: "claude-sonnet-4-5", apiKey: "bad" });
    expect(anthropicError.message).toBe("Anthropic answered 401: invalid x-api-key");
  });

  it("waits out a 429 with Retry-After and retries 5xx, then stops at the limit", async () => {
    openai.reply({ fail: 429, message: "Rate limit reached for gpt-4o", retryAfter: 1 }, { text: "after the wait" });
    const started = Date.now();
    expect(await agent({}).output).toMatchObject({ content: "after the wait" });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
    anthropic.reply({ fail: 529, message: "Overloaded" }, { fail: 529, message: "Overloaded" }, { fail: 529, message: "Overloaded" });
    const error = await failure({ model: "claude-sonnet-4-5" });
    expect(error.message).toBe("Anthropic answered 529: Overloaded (after 3 attempts)");
    expect(anthropic.requests).toHaveLength(3);
  });

  it("calls a malformed answer malformed, and an answer without usage too", async () => {
    openai.reply({ malformed: "<html>oops</html>" });
    expect((await failure({})).message).toBe("OpenAI sent a malformed answer: its answer is not JSON");
    anthropic.reply({ malformed: JSON.stringify({ type: "message", content: [{ type: "text", text: "hi" }] }) });
    expect((await failure({ model: "claude-sonnet-4-5" })).message).toBe("Anthropic sent a malformed answer: it has no usage report (input_tokens, output_tokens)");
  });

  it("does not retry a stream that broke after text went out (it would repeat it)", async () => {
    openai.reply({ breakAfterChunks: 3, text: "one two three four five" });
    const { output, chunks } = agent({ stream: true });
    const error = await output.then(
      () => null,
      (caught: unknown) => caught as WorkflowError,
    );
    expect(error?.code).toBe("PROVIDER_ERROR");
    expect(error?.message).toMatch(/^OpenAI's stream broke off/);
    expect(chunks).toEqual(["one", " two"]);
    expect(openai.requests).toHaveLength(1);
  });

  it("prices an unknown model at 0", async () => {
    openai.reply({ text: "x", usage: { prompt: 100, completion: 100 } });
    expect(await agent({ model: "gpt-unlisted" }).output).toMatchObject({ cost: { input: 0, output: 0, total: 0 } });
  });

  it("fails when its cost cannot be read, after reporting the tokens the run is charged for", async () => {
    const { output, usage } = agent({}, { pricing: () => Promise.reject(new Error("connection refused")) });
    const error = await output.then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(error).toMatchObject({ code: "BLOCK_FAILED", message: "the price of gpt-4o could not be read: connection refused" });
    expect(usage).toEqual([{ model: "gpt-4o", promptTokens: 12, completionTokens: 5, ownKey: false }]);
  });
});
