/**
 * Model blocks against the test stack's hosted providers: the stand-ins listen where
 * test/fixtures/functions.env points the stack's functions (OPENAI_BASE_URL, ANTHROPIC_BASE_URL,
 * with made-up hosted keys), so runs through the manual-run endpoint use the platform's key. And
 * the cost rule end to end: the Agent's own `cost` and what `finish_workflow_run` records for the
 * same usage, priced from `public.model_prices`, agree to the last digit, for the hosted key (2.5×)
 * and the user's own key (1×), in process and through the execute endpoint; and an Agent's tokens
 * through the endpoint's `stream: true` Server-Sent Events, in order, as they arrive.
 */
import postgres from "postgres";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../platform/config/stack-config.ts";
import { fixtureFunctionEnvironment } from "../../platform/functions-host/launch.ts";
import { runWorkflow } from "../../supabase/functions/_shared/workflows/runs/run-workflow.ts";
import { databaseModelPricing } from "../../supabase/functions/_shared/workflows/outbound/model-cost.ts";
import { callService } from "../../supabase/functions/_shared/db/service-calls.ts";
import { guardedFetch } from "../../supabase/functions/_shared/workflows/outbound/guard.ts";
import { WorkflowBuilder } from "../../supabase/functions/_shared/workflows/state/state-builder.ts";
import { fetchFrom, serviceClient, simulatedClientAddress } from "../helpers/clients.ts";
import { env } from "../helpers/env.ts";
import { startAnthropicStandIn, startOpenAiStandIn, type ModelStandIn } from "../stand-ins/models.ts";
import { LOOPBACK_POLICY } from "../stand-ins/outbound.ts";
import { apiKey, deployedWorkflow, execute, sseFrames } from "./execute-api.ts";
import { createWorkflow, createWorkspace, type TestWorkspace } from "./factories.ts";
import { liftLimits } from "./logs-helpers.ts";

const hosted = fixtureFunctionEnvironment(loadConfig("test").slot);
const OWN_KEY = "sk-users-own-key-5555555555";
let openai: ModelStandIn;
let anthropic: ModelStandIn;
let workspace: TestWorkspace;
const sql = postgres(env.dbUrl, { max: 1, onnotice: () => {} });

beforeAll(async () => {
  openai = await startOpenAiStandIn([hosted.OPENAI_API_KEY, OWN_KEY], Number(new URL(hosted.OPENAI_BASE_URL).port));
  anthropic = await startAnthropicStandIn([hosted.ANTHROPIC_API_KEY, OWN_KEY], Number(new URL(hosted.ANTHROPIC_BASE_URL).port));
  workspace = await createWorkspace("Model blocks");
  // Manual runs spend the plan's synchronous rate limit (5 a minute on Free); this suite runs more.
  await liftLimits(workspace.id);
});
afterAll(async () => {
  await Promise.all([openai.close(), anthropic.close(), sql.end()]);
});
beforeEach(() => {
  openai.requests.length = 0;
  anthropic.requests.length = 0;
});

async function runDraft(state: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const editor = workspace.members.editor;
  const id = await createWorkflow(editor, workspace.id, `Models ${Math.random()}`, state as never);
  const { data, error, response } = await editor.client.functions.invoke(`workflow-run/${id}`, { body: {} });
  const body = (data ?? (error ? await (error as { context: Response }).context.json() : null)) as Record<string, unknown>;
  return { status: response?.status ?? 0, body };
}

function agentFlow(agent: Record<string, unknown>) {
  return new WorkflowBuilder()
    .block("start", "api_trigger", {}, { name: "Start" })
    .block("ask", "agent", agent, { name: "Ask" })
    .edge("start", "ask")
    .build();
}

describe("model blocks through the stack, with the platform's keys", () => {
  it("an Agent uses the hosted OpenAI key from the functions' environment and charges 2.5 × the table's price", async () => {
    openai.reply({ text: "Olá!", usage: { prompt: 1000, completion: 500 } });
    const { status, body } = await runDraft(agentFlow({ model: "gpt-4o", userPrompt: "Say hello" }));
    expect(status).toBe(200);
    expect(openai.requests[0].headers.authorization).toBe(`Bearer ${hosted.OPENAI_API_KEY}`);
    // gpt-4o is seeded at $2.50 / $10.00 per million tokens.
    expect(body.output).toEqual({ content: "Olá!", model: "gpt-4o", tokens: { prompt: 1000, completion: 500, total: 1500 }, cost: { input: 0.00625, output: 0.0125, total: 0.01875 }, toolCalls: [] });
    expect(JSON.stringify(body)).not.toContain(hosted.OPENAI_API_KEY);
  });

  it("an Agent with the user's own key pays the base price, and its key never comes back", async () => {
    anthropic.reply({ text: "Oi.", usage: { prompt: 2000, completion: 300 } });
    const { status, body } = await runDraft(agentFlow({ model: "claude-sonnet-4-5", userPrompt: "Say hi", apiKey: OWN_KEY }));
    expect(status).toBe(200);
    expect(anthropic.requests[0].headers["x-api-key"]).toBe(OWN_KEY);
    expect(body.output).toMatchObject({ cost: { input: 0.006, output: 0.0045, total: 0.0105 } });
    expect(JSON.stringify(body)).not.toContain(OWN_KEY);
    const spans = body.traceSpans as { blockId: string; input: { apiKey: string } }[];
    expect(spans.find((span) => span.blockId === "ask")?.input.apiKey).toBe("***");
  });

  it("an LLM Router routes through the hosted Anthropic key", async () => {
    anthropic.reply({ toolCalls: [{ name: "respond", arguments: { route: "refund", reasoning: "Asks for money back." } }], usage: { prompt: 150, completion: 12 } });
    const state = new WorkflowBuilder()
      .block("start", "api_trigger", {}, { name: "Start" })
      .block("triage", "llm_router", { model: "claude-haiku-4-5", prompt: "I want my money back", routes: [{ id: "refund", description: "Refund requests" }, { id: "other", description: "Anything else" }] }, { name: "Triage" })
      .block("refund", "response", { body: { route: "<triage.selectedRoute>", cost: "<triage.cost.total>" } }, { name: "Refund" })
      .block("other", "response", { body: { route: "other" } }, { name: "Other" })
      .edge("start", "triage")
      .edge("triage", "refund", "router-refund")
      .edge("triage", "other", "router-other")
      .build();
    const { status, body } = await runDraft(state);
    expect(status).toBe(200);
    expect(anthropic.requests[0].headers["x-api-key"]).toBe(hosted.ANTHROPIC_API_KEY);
    // claude-haiku-4-5 at $1 / $5: (150 × 1 + 12 × 5) / 1e6 × 2.5
    expect(body.output).toEqual({ data: { route: "refund", cost: 0.000525 }, status: 200, headers: {} });
  });

  it("a provider refusing the call fails the block with its message, not the endpoint", async () => {
    openai.reply({ fail: 400, message: "Invalid value for 'temperature'" });
    const { status, body } = await runDraft(agentFlow({ model: "gpt-4o", userPrompt: "x" }));
    expect(status).toBe(500);
    expect(body).toMatchObject({ code: "EXECUTION_FAILED", errorCode: "PROVIDER_ERROR", error: "Block \"Ask\" (agent): OpenAI answered 400: Invalid value for 'temperature'" });
  });
});

describe("the Agent's cost and the recorded cost agree to the last digit", () => {
  /** Runs `state` in process (model cost from the database), records the run with its usage, and returns both. */
  async function runAndRecordState(state: ReturnType<WorkflowBuilder["build"]>) {
    const result = await runWorkflow({
      workflow: state,
      trigger: { kind: "api", input: {} },
      services: {
        outbound: {
          fetch: (url, init) => guardedFetch(url, { ...init, policy: LOOPBACK_POLICY }),
          providers: { openai: { baseUrl: hosted.OPENAI_BASE_URL, apiKey: hosted.OPENAI_API_KEY }, anthropic: { baseUrl: hosted.ANTHROPIC_BASE_URL, apiKey: hosted.ANTHROPIC_API_KEY } },
          // The functions' own way to the database: the runtime's service-role pool.
          pricing: databaseModelPricing(callService),
        },
      },
    });
    expect(result.error).toBeNull();
    const workflowId = await createWorkflow(workspace.members.editor, workspace.id, `Cost ${Math.random()}`, state);
    const service = serviceClient();
    const admitted = await service.rpc("admit_workflow_run", { p_workflow_id: workflowId, p_trigger: "manual", p_user_id: workspace.members.editor.id });
    const executionId = (admitted.data as { executionId: string }).executionId;
    const finished = await service.rpc("finish_workflow_run", { p_execution_id: executionId, p_status: "completed", p_model_usage: result.modelUsage });
    expect(finished.error).toBeNull();
    return { result, executionId };
  }

  /** Runs two Agents in process (model cost from the database), records the run with their usage, and returns both sides. */
  async function runAndRecord(ownKey: boolean) {
    openai.reply({ text: "a", usage: { prompt: 123_457, completion: 9_871 } });
    anthropic.reply({ text: "b", usage: { prompt: 77_777, completion: 3_333 } });
    const key = ownKey ? { apiKey: OWN_KEY } : {};
    const state = new WorkflowBuilder()
      .block("start", "api_trigger", {}, { name: "Start" })
      .block("first", "agent", { model: "o4-mini", userPrompt: "one", ...key }, { name: "First" })
      .block("second", "agent", { model: "claude-3-5-haiku", userPrompt: "two", ...key }, { name: "Second" })
      .edge("start", "first")
      .edge("first", "second")
      .build();
    const { result, executionId } = await runAndRecordState(state);
    expect(result.modelUsage).toEqual([
      { model: "o4-mini", promptTokens: 123_457, completionTokens: 9_871, ownKey },
      { model: "claude-3-5-haiku", promptTokens: 77_777, completionTokens: 3_333, ownKey },
    ]);
    const [recorded] = await sql<{ first: string; second: string; firstIn: string; firstOut: string; total: string }[]>`
      select cost -> 'models' -> 'o4-mini' ->> 'total' as first, cost -> 'models' -> 'claude-3-5-haiku' ->> 'total' as second,
        cost -> 'models' -> 'o4-mini' ->> 'input' as "firstIn", cost -> 'models' -> 'o4-mini' ->> 'output' as "firstOut", trim_scale(cost_total)::text as total
      from public.workflow_executions where id = ${executionId}`;
    const outputs = result.context.blockStates;
    return { recorded, first: outputs.first.output as { cost: { input: number; output: number; total: number } }, second: outputs.second.output as { cost: { total: number } } };
  }

  it("with the platform's key (2.5 × the price)", async () => {
    const { recorded, first, second } = await runAndRecord(false);
    // o4-mini at $1.10 / $4.40: (123,457 × 1.10 + 9,871 × 4.40) / 1e6 × 2.5
    expect(recorded).toEqual({ first: "0.44808775", second: "0.188884", firstIn: "0.33950675", firstOut: "0.108581", total: "0.63797175" });
    expect(String(first.cost.input)).toBe(recorded.firstIn);
    expect(String(first.cost.output)).toBe(recorded.firstOut);
    expect(String(first.cost.total)).toBe(recorded.first);
    expect(String(second.cost.total)).toBe(recorded.second);
  });

  it("with the user's own key (the price itself)", async () => {
    const { recorded, first, second } = await runAndRecord(true);
    expect(recorded).toEqual({ first: "0.1792351", second: "0.0755536", firstIn: "0.1358027", firstOut: "0.0434324", total: "0.2557887" });
    expect(String(first.cost.total)).toBe(recorded.first);
    expect(String(first.cost.input)).toBe(recorded.firstIn);
    expect(String(first.cost.output)).toBe(recorded.firstOut);
    expect(String(second.cost.total)).toBe(recorded.second);
  });

  it("for an Agent that called its model twice, priced once from the summed tokens as the record prices each call", async () => {
    // The tool's URL answers 404; the model reads the error and answers.
    openai.reply({ toolCalls: [{ name: "ping", arguments: {} }], usage: { prompt: 123_457, completion: 9_871 } }, { text: "done", usage: { prompt: 54_323, completion: 1_237 } });
    const state = new WorkflowBuilder()
      .block("start", "api_trigger", {}, { name: "Start" })
      .block("ask", "agent", { model: "o4-mini", userPrompt: "ping it", tools: [{ name: "ping", type: "api", config: { url: `${hosted.OPENAI_BASE_URL}/ping` } }] }, { name: "Ask" })
      .edge("start", "ask")
      .build();
    const { result, executionId } = await runAndRecordState(state);
    expect(result.modelUsage).toEqual([
      { model: "o4-mini", promptTokens: 123_457, completionTokens: 9_871, ownKey: false },
      { model: "o4-mini", promptTokens: 54_323, completionTokens: 1_237, ownKey: false },
    ]);
    const [recorded] = await sql<{ input: string; output: string; total: string }[]>`
      select cost -> 'models' -> 'o4-mini' ->> 'input' as input, cost -> 'models' -> 'o4-mini' ->> 'output' as output, cost -> 'models' -> 'o4-mini' ->> 'total' as total
      from public.workflow_executions where id = ${executionId}`;
    // o4-mini at $1.10 / $4.40, hosted: (177,780 × 1.10 + 11,108 × 4.40) / 1e6 × 2.5
    expect(recorded).toEqual({ input: "0.488895", output: "0.122188", total: "0.611083" });
    const cost = (result.context.blockStates.ask.output as { cost: { input: number; output: number; total: number } }).cost;
    expect({ input: String(cost.input), output: String(cost.output), total: String(cost.total) }).toEqual(recorded);
  });
});

describe("agents through the execute endpoint", () => {
  let key: string;
  beforeAll(async () => {
    key = (await apiKey(workspace.members.editor)).key;
  });

  it("record the Agent's cost as the run's cost, to the last digit", async () => {
    openai.reply({ text: "Recorded.", usage: { prompt: 123_457, completion: 9_871 } });
    const id = await deployedWorkflow(workspace.members.editor, workspace.id, "Recorded agent", agentFlow({ model: "o4-mini", userPrompt: "hi" }));
    const answer = await execute(id, key, {});
    expect(answer.status).toBe(200);
    const cost = (answer.body.output as { cost: { input: number; output: number; total: number } }).cost;
    const [recorded] = await sql<{ total: string; model: string; base: string }[]>`
      select trim_scale(cost_total)::text as total, cost -> 'models' -> 'o4-mini' ->> 'total' as model, cost ->> 'base' as base
      from public.workflow_executions where id = ${answer.body.executionId as string}`;
    expect(recorded).toEqual({ model: "0.44808775", total: "0.44908775", base: "0.001" });
    expect(String(cost.total)).toBe(recorded.model);
  });

  it("stream an Agent's tokens as SSE chunks from its block, in order and as they arrive, then done and [DONE]", async () => {
    const pieces = ["Your", " order", " has", " shipped", " and", " arrives", " Friday."];
    openai.chunkDelayMs = 150;
    openai.reply({ chunks: pieces, usage: { prompt: 40, completion: 7 } });
    try {
      const state = new WorkflowBuilder()
        .block("start", "api_trigger", {}, { name: "Start" })
        .block("writer", "agent", { model: "gpt-4o-mini", userPrompt: "Tell the customer", stream: true }, { name: "Writer" })
        .edge("start", "writer")
        .build();
      const id = await deployedWorkflow(workspace.members.editor, workspace.id, "Streaming agent", state);
      const response = await fetchFrom(simulatedClientAddress())(`${env.url}/api/workflows/${id}/execute`, {
        method: "POST",
        headers: { "X-API-Key": key, "content-type": "application/json" },
        body: JSON.stringify({ stream: true }),
      });
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
      // Read as it comes: when did the first chunk and the end arrive?
      const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
      let text = "";
      let firstChunkAt = 0;
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        text += value;
        if (!firstChunkAt && text.includes('"chunk"')) firstChunkAt = Date.now();
      }
      const endedAt = Date.now();
      const frames = sseFrames(text);
      expect(frames).toEqual([
        ...pieces.map((chunk) => ({ blockId: "writer", chunk })),
        { event: "done", success: true, output: expect.objectContaining({ content: pieces.join(""), tokens: { prompt: 40, completion: 7, total: 47 } }), metadata: { duration: expect.any(Number) } },
        "[DONE]",
      ]);
      // The provider paused 150 ms between its chunks: the first reached the client long before the end.
      expect(endedAt - firstChunkAt).toBeGreaterThanOrEqual(6 * 150 - 50);
    } finally {
      openai.chunkDelayMs = 5;
    }
  });
});
