import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startAnthropicStandIn, startOpenAiStandIn, type ModelStandIn } from "../../../../../../test/stand-ins/models.ts";
import { standInOutbound, type StandInCost } from "../../../../../../test/stand-ins/outbound.ts";
import { WorkflowError } from "../../core/errors.ts";
import type { ModelUsage } from "../../outbound/model-cost.ts";
import { testRun } from "../../../../../../test/helpers/workflows/block-run.ts";
import type { LlmRouterInput } from "./config.ts";
import { llmRouterHandler } from "./handler.ts";

const KEY = "sk-router-key-000000000";
/** What the database answers for gpt-4o-mini ($0.15 / $0.60, hosted 2.5×) and the usage below. */
const COSTS: StandInCost[] = [{ usage: { model: "gpt-4o-mini", promptTokens: 200, completionTokens: 20, ownKey: false }, cost: { input: 0.000075, output: 0.00003, total: 0.000105 } }];
const ROUTES = [
  { id: "billing", title: "Billing", description: "Invoices, payments, refunds" },
  { id: "tech", description: "Bugs, errors, outages" },
];

let openai: ModelStandIn;
let anthropic: ModelStandIn;
beforeAll(async () => {
  openai = await startOpenAiStandIn([KEY]);
  anthropic = await startAnthropicStandIn([KEY]);
});
afterAll(async () => {
  await Promise.all([openai.close(), anthropic.close()]);
});
beforeEach(() => {
  openai.requests.length = 0;
  anthropic.requests.length = 0;
});

function route(input: Partial<LlmRouterInput>) {
  const usage: ModelUsage[] = [];
  const base = testRun<LlmRouterInput>({ model: "gpt-4o-mini", prompt: "I was charged twice", routes: ROUTES, ...input }, { deadline: Date.now() + 20_000 });
  const output = Promise.resolve(llmRouterHandler.execute({
    ...base,
    services: { ...base.services, outbound: standInOutbound({ providers: { openai: { baseUrl: openai.baseUrl, apiKey: KEY }, anthropic: { baseUrl: anthropic.baseUrl, apiKey: KEY } }, costs: COSTS }) },
    targetsOf: (handle) => (handle === "router-billing" ? [{ id: "refunds", name: "Refunds", type: "agent" }] : []),
    recordModelUsage: (entry) => usage.push(entry),
  }));
  return { output, usage };
}

describe("LLM Router", () => {
  it("asks the model to pick one of the route ids, and follows its choice", async () => {
    openai.reply({ text: JSON.stringify({ route: "billing", reasoning: "A double charge is a billing matter." }), usage: { prompt: 200, completion: 20 } });
    const { output, usage } = route({});
    expect(await output).toEqual({
      prompt: "I was charged twice",
      selectedRoute: "billing",
      routeTitle: "Billing",
      selectedPath: { blockId: "refunds", blockName: "Refunds", blockType: "agent" },
      reasoning: "A double charge is a billing matter.",
      model: "gpt-4o-mini",
      tokens: { prompt: 200, completion: 20, total: 220 },
      // (200 × 0.15 + 20 × 0.60) / 1,000,000 × 2.5
      cost: { input: 0.000075, output: 0.00003, total: 0.000105 },
    });
    const body = openai.requests[0].body as { messages: { role: string; content: string }[]; response_format: { json_schema: { schema: unknown } } };
    expect(body.messages[1].content).toBe("Routes:\n- billing (Billing): Invoices, payments, refunds\n- tech: Bugs, errors, outages\n\nRequest:\nI was charged twice");
    expect(body.response_format.json_schema.schema).toEqual({ type: "object", properties: { route: { type: "string", enum: ["billing", "tech"] }, reasoning: { type: "string" } }, required: ["route", "reasoning"], additionalProperties: false });
    expect(usage).toEqual([{ model: "gpt-4o-mini", promptTokens: 200, completionTokens: 20, ownKey: false }]);
  });

  it("routes with Anthropic through the answer tool", async () => {
    anthropic.reply({ toolCalls: [{ name: "respond", arguments: { route: "tech", reasoning: "An error message." } }] });
    const result = await route({ model: "claude-haiku-4-5", prompt: { subject: "Error 500 on login" } }).output;
    expect(result).toMatchObject({ selectedRoute: "tech", routeTitle: null, selectedPath: null, prompt: '{"subject":"Error 500 on login"}' });
  });

  it("fails when the model makes up a route, keeping what the call cost", async () => {
    openai.reply({ text: JSON.stringify({ route: "sales", reasoning: "?" }) });
    const error = await route({}).output.then(
      () => null,
      (caught: unknown) => caught as WorkflowError,
    );
    expect(error).toBeInstanceOf(WorkflowError);
    expect(error?.code).toBe("PROVIDER_ERROR");
    expect(error?.message).toBe('the model chose no known route (answered "{\\"route\\":\\"sales\\",\\"reasoning\\":\\"?\\"}"; routes: billing, tech)');
    expect(error?.output).toMatchObject({ model: "gpt-4o-mini", tokens: { total: 17 } });
  });
});
