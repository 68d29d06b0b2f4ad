/**
 * A block's conversation with one model, metered: which provider and key it uses (the block's own
 * key, or the platform's hosted key, never sent anywhere but the hosted base URL), every call's
 * tokens reported to the run (`recordModelUsage`, which the run's record prices), and the block's
 * own cost, asked of the same SQL function (model-cost.ts). Used by the Agent and the LLM Router.
 */
import { WorkflowError } from "../../core/errors.ts";
import type { BlockRun } from "../../core/block-handler.ts";
import type { ModelCost } from "../model-cost.ts";
import type { ChatAnswer, ChatProvider, ChatRequest } from "./chat.ts";
import { CHAT_PROVIDERS } from "./index.ts";
import { PROVIDER_NAMES, providerOfModel, type ProviderName } from "./settings.ts";
import { tracedFetch } from "../traced-fetch.ts";

/** How a block names its model and, optionally, its own key and endpoint. */
export interface ModelChoice {
  model: unknown;
  provider?: unknown;
  apiKey?: unknown;
  baseUrl?: unknown;
}

const KEY_VARIABLES: Readonly<Record<ProviderName, string>> = { openai: "OPENAI_API_KEY", anthropic: "ANTHROPIC_API_KEY" };

function fail(message: string): never {
  throw new WorkflowError("BLOCK_FAILED", message);
}

function optionalText(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  if (typeof value !== "string") fail(`${field} must be text`);
  return value;
}

/** A model conversation for one block execution. */
export class MeteredModel {
  private prompt = 0;
  private completion = 0;

  private constructor(
    private readonly run: BlockRun<unknown>,
    readonly model: string,
    readonly provider: ChatProvider,
    private readonly baseUrl: string,
    private readonly apiKey: string | null,
    /** True when the block's own key (or own endpoint) pays: priced without the hosted markup. */
    readonly ownKey: boolean,
  ) {}

  /** Picks provider, endpoint and key. */
  static open(run: BlockRun<unknown>, choice: ModelChoice): MeteredModel {
    if (typeof choice.model !== "string" || choice.model.trim() === "") fail("model must be a model id such as gpt-4o or claude-sonnet-4-5");
    const model = choice.model.trim();
    const named = optionalText(choice.provider, "provider");
    if (named !== undefined && !PROVIDER_NAMES.includes(named as ProviderName)) fail(`provider must be one of ${PROVIDER_NAMES.join(", ")} (got "${named}")`);
    const providerName = (named as ProviderName | undefined) ?? providerOfModel(model);
    if (!providerName) fail(`the provider of model "${model}" is not known from its name: set provider (${PROVIDER_NAMES.join(" or ")})`);
    const ownKey = optionalText(choice.apiKey, "apiKey");
    const ownBaseUrl = optionalText(choice.baseUrl, "baseUrl");
    const hosted = run.services.outbound.providers[providerName];
    const provider = CHAT_PROVIDERS[providerName];
    let endpoint: { baseUrl: string; apiKey: string | null; ownKey: boolean };
    // The platform's key only ever goes to the platform's endpoint.
    if (ownBaseUrl !== undefined) endpoint = { baseUrl: ownBaseUrl, apiKey: ownKey ?? null, ownKey: true };
    else if (ownKey !== undefined) endpoint = { baseUrl: hosted.baseUrl, apiKey: ownKey, ownKey: true };
    else if (hosted.apiKey) endpoint = { baseUrl: hosted.baseUrl, apiKey: hosted.apiKey, ownKey: false };
    else fail(`no ${provider.label} key: set apiKey in the block (your own key), or ${KEY_VARIABLES[providerName]} on the server`);
    return new MeteredModel(run, model, provider, endpoint.baseUrl, endpoint.apiKey, endpoint.ownKey);
  }

  /** One call; its tokens are reported to the run and added to the block's cost. */
  async send(request: Omit<ChatRequest, "model">): Promise<ChatAnswer> {
    let answer: ChatAnswer;
    try {
      answer = await this.provider.send(
        { ...request, model: this.model },
        { baseUrl: this.baseUrl, apiKey: this.apiKey, fetch: tracedFetch(this.run.services.outbound.fetch, this.run.traceHeaders()), signal: this.run.signal, deadline: this.run.deadline, sleep: (ms, signal) => this.run.services.clock.sleep(ms, signal) },
      );
    } catch (error) {
      // A provider echoing the platform's key must not hand it to the workflow's author.
      if (!this.ownKey && this.apiKey && error instanceof Error) error.message = error.message.replaceAll(this.apiKey, "***");
      throw error;
    }
    this.prompt += answer.promptTokens;
    this.completion += answer.completionTokens;
    this.run.recordModelUsage({ model: this.model, promptTokens: answer.promptTokens, completionTokens: answer.completionTokens, ownKey: this.ownKey });
    return answer;
  }

  /** Tokens of every call so far. */
  tokens(): { prompt: number; completion: number; total: number } {
    return { prompt: this.prompt, completion: this.completion, total: this.prompt + this.completion };
  }

  /** Cost of every call so far, exactly as the run's record prices it (one database call). */
  async cost(): Promise<ModelCost> {
    try {
      return await this.run.services.outbound.pricing({ model: this.model, promptTokens: this.prompt, completionTokens: this.completion, ownKey: this.ownKey });
    } catch (error) {
      throw new WorkflowError("BLOCK_FAILED", `the price of ${this.model} could not be read: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}
