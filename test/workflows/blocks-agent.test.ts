/**
 * Agents in whole runs, in process: streamed text reaches the run's `onChunk` tagged with the
 * producing block, in order and while the run is still going; secrets are masked in chunks too;
 * model usage is collected for the run's record; failures take the error edge.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { runWorkflow } from "../../supabase/functions/_shared/workflows/runs/run-workflow.ts";
import { WorkflowBuilder } from "../../supabase/functions/_shared/workflows/state/state-builder.ts";
import { startAnthropicStandIn, startOpenAiStandIn, type ModelStandIn } from "../stand-ins/models.ts";
import { standInOutbound } from "../stand-ins/outbound.ts";

const KEY = "sk-engine-test-key-000000";
let openai: ModelStandIn;
let anthropic: ModelStandIn;
let services: { outbound: ReturnType<typeof standInOutbound> };

beforeAll(async () => {
  openai = await startOpenAiStandIn([KEY]);
  anthropic = await startAnthropicStandIn([KEY]);
  services = { outbound: standInOutbound({ providers: { openai: { baseUrl: openai.baseUrl, apiKey: KEY }, anthropic: { baseUrl: anthropic.baseUrl, apiKey: KEY } } }) };
});
afterAll(async () => {
  await Promise.all([openai.close(), anthropic.close()]);
});
beforeEach(() => {
  openai.chunkDelayMs = 5;
  anthropic.chunkDelayMs = 5;
});

describe("streaming agents", () => {
  it("hand their text to onChunk tagged with their block id, each block's chunks in order, before the run ends", async () => {
    openai.chunkDelayMs = 15;
    anthropic.chunkDelayMs = 15;
    openai.reply({ text: "red orange yellow green" });
    anthropic.reply({ text: "one two three" });
    const state = new WorkflowBuilder()
      .block("start", "api_trigger", {}, { name: "Start" })
      .block("colours", "agent", { model: "gpt-4o-mini", userPrompt: "colours", stream: true }, { name: "Colours" })
      .block("numbers", "agent", { model: "claude-sonnet-4-5", userPrompt: "numbers", stream: true }, { name: "Numbers" })
      .block("quiet", "agent", { model: "gpt-4o-mini", userPrompt: "not streamed" }, { name: "Quiet" })
      .block("done", "response", { body: { colours: "<colours.content>", numbers: "<numbers.content>" } }, { name: "Done" })
      .edge("start", "colours")
      .edge("start", "numbers")
      .edge("colours", "quiet")
      .edge("quiet", "done")
      .edge("numbers", "done")
      .build();
    const chunks: { blockId: string; chunk: string; at: number }[] = [];
    const finished: Record<string, number> = {};
    const result = await runWorkflow({
      workflow: state,
      trigger: { kind: "api", input: {} },
      services,
      onChunk: (blockId, chunk) => chunks.push({ blockId, chunk, at: Date.now() }),
      onBlockComplete: (span) => (finished[span.blockId] = Date.now()),
    });
    expect(result.status).toBe("success");
    expect(chunks.filter((c) => c.blockId === "colours").map((c) => c.chunk)).toEqual(["red", " orange", " yellow", " green"]);
    expect(chunks.filter((c) => c.blockId === "numbers").map((c) => c.chunk)).toEqual(["one", " two", " three"]);
    expect(chunks.some((c) => c.blockId === "quiet")).toBe(false);
    // The two blocks streamed at the same time: their chunks interleave.
    const order = chunks.map((c) => c.blockId);
    expect(order.indexOf("numbers")).toBeLessThan(order.lastIndexOf("colours"));
    // Each chunk arrived before its block finished, so a listener sees tokens as they come.
    for (const chunk of chunks) expect(chunk.at).toBeLessThanOrEqual(finished[chunk.blockId]);
    expect(result.output).toMatchObject({ data: { colours: "red orange yellow green", numbers: "one two three" } });
    expect(result.modelUsage.map((usage) => usage.model).sort()).toEqual(["claude-sonnet-4-5", "gpt-4o-mini", "gpt-4o-mini"]);
  });

  it("mask environment values in chunks as in everything else the run returns, even split across chunks", async () => {
    openai.reply({ text: "the code is super-secret-value-42 ok" });
    const chunks: string[] = [];
    const state = new WorkflowBuilder()
      .block("start", "api_trigger", {}, { name: "Start" })
      .block("leak", "agent", { model: "gpt-4o-mini", userPrompt: "Repeat {{CODE}}", stream: true }, { name: "Leak" })
      .edge("start", "leak")
      .build();
    const result = await runWorkflow({ workflow: state, trigger: { kind: "api", input: {} }, env: { CODE: "super-secret-value-42" }, services, onChunk: (_, chunk) => chunks.push(chunk) });
    expect(openai.requests.at(-1)?.body.messages).toEqual([{ role: "user", content: "Repeat super-secret-value-42" }]);
    expect(chunks.join("")).toBe("the code is *** ok");
    expect(JSON.stringify(result)).not.toContain("super-secret-value-42");
    // A model may split a secret across tokens: the stream holds text back until it can mask it whole.
    openai.reply({ chunks: ["it is super-sec", "ret-val", "ue-42 and more text after it"] });
    const split: string[] = [];
    await runWorkflow({ workflow: state, trigger: { kind: "api", input: {} }, env: { CODE: "super-secret-value-42" }, services, onChunk: (_, chunk) => split.push(chunk) });
    expect(split.join("")).toBe("it is *** and more text after it");
    expect(split.length).toBeGreaterThan(1);
  });
});

describe("agents in a workflow", () => {
  it("feed later blocks, and a provider failure takes the error edge with its code", async () => {
    openai.reply({ fail: 401, message: "Incorrect API key provided" });
    const state = new WorkflowBuilder()
      .block("start", "api_trigger", {}, { name: "Start" })
      .block("ask", "agent", { model: "gpt-4o-mini", userPrompt: "hi" }, { name: "Ask" })
      .block("ok", "response", { body: "<ask.content>" }, { name: "Ok" })
      .block("fallback", "response", { status: 503, body: { error: "<ask.error>", code: "<ask.code>" } }, { name: "Fallback" })
      .edge("start", "ask")
      .edge("ask", "ok")
      .edge("ask", "fallback", "error")
      .build();
    const result = await runWorkflow({ workflow: state, trigger: { kind: "api", input: {} }, services });
    expect(result.output).toEqual({ data: { error: 'Block "Ask" (agent): OpenAI answered 401: Incorrect API key provided', code: "PROVIDER_ERROR" }, status: 503, headers: {} });
    expect(result.modelUsage).toEqual([]);
  });

  it("an LLM Router's choice decides the path, recorded in the run's decisions", async () => {
    openai.reply({ text: JSON.stringify({ route: "b", reasoning: "fits b" }) });
    const state = new WorkflowBuilder()
      .block("start", "api_trigger", {}, { name: "Start" })
      .block("pick", "llm_router", { model: "gpt-4o-mini", prompt: "x", routes: [{ id: "a", description: "first" }, { id: "b", description: "second" }] }, { name: "Pick" })
      .block("a", "variables", { assignments: [{ name: "went", value: "a" }] }, { name: "A" })
      .block("b", "variables", { assignments: [{ name: "went", value: "b" }] }, { name: "B" })
      .edge("start", "pick")
      .edge("pick", "a", "router-a")
      .edge("pick", "b", "router-b")
      .build();
    const result = await runWorkflow({ workflow: state, trigger: { kind: "api", input: {} }, services });
    expect(result.context.variables).toEqual({ went: "b" });
    expect(result.context.decisions).toEqual({ condition: {}, router: { pick: "b" } });
    expect(result.context.blockStates.a).toEqual({ status: "skipped" });
  });
});
