/**
 * LLM Router: a model reads the prompt and picks the route whose description fits best; only that
 * route's `router-<id>` edges stay active. The model answers JSON (`{route, reasoning}`, the route
 * one of the ids), through the same providers, keys and metering as the Agent. A route id the model
 * made up fails the block (an `error` edge can take over).
 * Output: `prompt`, `selectedRoute`, `routeTitle`, `selectedPath`, `reasoning`, `model`, `tokens`, `cost`.
 */
import type { BlockOutput } from "../../core/context.ts";
import { WorkflowError } from "../../core/errors.ts";
import { preview } from "../../core/values.ts";
import { MeteredModel } from "../../outbound/providers/model-call.ts";
import { numberSetting } from "../agent/handler.ts";
import { DEFAULT_BLOCK_TIMEOUT_MS, type BlockHandler } from "../../core/block-handler.ts";
import { ROUTER_HANDLE_PREFIX } from "../router/config.ts";
import type { LlmRouterInput } from "./config.ts";

const INSTRUCTIONS = "You route requests. Read the request and choose the one route whose description fits it best. Answer with the route's id and one sentence of reasoning.";

/** Handler of `llm_router` blocks. */
export const llmRouterHandler: BlockHandler<LlmRouterInput> = {
  timeoutMs: () => DEFAULT_BLOCK_TIMEOUT_MS * 2,
  secretsOf: (input) => (typeof input.apiKey === "string" && input.apiKey !== "" ? [input.apiKey] : []),
  async execute(run): Promise<BlockOutput> {
    const input = run.input;
    if (input.prompt === undefined || input.prompt === null || input.prompt === "") throw new WorkflowError("BLOCK_FAILED", "prompt is empty");
    const prompt = typeof input.prompt === "string" ? input.prompt : JSON.stringify(input.prompt);
    const temperature = numberSetting(input.temperature, "temperature", 0, 2, false);
    const model = MeteredModel.open(run, input);
    const ids = input.routes.map((route) => route.id);
    const routes = input.routes.map((route) => `- ${route.id}${route.title ? ` (${route.title})` : ""}: ${route.description}`).join("\n");
    const answer = await model.send({
      system: typeof input.systemPrompt === "string" && input.systemPrompt !== "" ? `${INSTRUCTIONS}\n\n${input.systemPrompt}` : INSTRUCTIONS,
      messages: [{ role: "user", content: `Routes:\n${routes}\n\nRequest:\n${prompt}` }],
      ...(temperature !== undefined ? { temperature } : {}),
      responseSchema: { type: "object", properties: { route: { type: "string", enum: ids }, reasoning: { type: "string" } }, required: ["route", "reasoning"], additionalProperties: false },
    });
    const metered = { model: model.model, tokens: model.tokens(), cost: await model.cost() };
    let choice: { route?: unknown; reasoning?: unknown } | null = null;
    try {
      choice = JSON.parse(answer.content);
    } catch {
      // Reported below.
    }
    const route = input.routes.find((candidate) => candidate.id === choice?.route);
    if (!route) throw new WorkflowError("PROVIDER_ERROR", `the model chose no known route (answered ${preview(answer.content)}; routes: ${ids.join(", ")})`, { output: { prompt, ...metered } });
    const target = run.targetsOf(`${ROUTER_HANDLE_PREFIX}${route.id}`)[0];
    return {
      prompt,
      selectedRoute: route.id,
      routeTitle: route.title ?? null,
      selectedPath: target ? { blockId: target.id, blockName: target.name, blockType: target.type } : null,
      reasoning: typeof choice?.reasoning === "string" ? choice.reasoning : null,
      ...metered,
    };
  },
};
