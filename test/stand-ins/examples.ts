/**
 * What the runnable examples of the outside-reaching blocks run against in `npm test`: one of each
 * stand-in, and for each sample its scripted model replies, vector collections, and environment
 * with `{stand-in:http}` / `{stand-in:qdrant}` replaced by the stand-ins' URLs. The examples use
 * the platform's (hosted) keys, priced by the database (price_model_usage).
 */
import { databaseModelPricing } from "../../supabase/functions/_shared/workflows/outbound/model-cost.ts";
import type { OutboundServices } from "../../supabase/functions/_shared/workflows/outbound/services.ts";
import { callService } from "../../supabase/functions/_shared/db/service-calls.ts";
import { startMisbehavingServer, type MisbehavingServer } from "./misbehaving-http.ts";
import { startAnthropicStandIn, startOpenAiStandIn, type ModelReply, type ModelStandIn } from "./models.ts";
import { standInOutbound } from "./outbound.ts";
import { startQdrantStandIn, type QdrantStandIn } from "./qdrant.ts";

/** What a sample asks of the stand-ins (examples/workflows/*.json, `samples[].standIns`). */
export interface SampleStandIns {
  models?: { openai?: ModelReply[]; anthropic?: ModelReply[] };
  collections?: { name: string; size: number }[];
}

const HOSTED_KEY = "sk-examples-hosted-key-000000";

/** The stand-ins the examples share. */
export class ExampleStandIns {
  private constructor(
    private readonly http: MisbehavingServer,
    private readonly qdrant: QdrantStandIn,
    private readonly openai: ModelStandIn,
    private readonly anthropic: ModelStandIn,
  ) {}

  static async start(): Promise<ExampleStandIns> {
    return new ExampleStandIns(await startMisbehavingServer(), await startQdrantStandIn(), await startOpenAiStandIn([HOSTED_KEY]), await startAnthropicStandIn([HOSTED_KEY]));
  }

  /** Sets the stand-ins up for a sample; returns its environment and the run's outbound services. */
  prepare(env: Record<string, string> | undefined, standIns: SampleStandIns | undefined): { env: Record<string, string>; services: { outbound: OutboundServices } } {
    for (const collection of standIns?.collections ?? []) this.qdrant.createCollection(collection.name, collection.size);
    this.openai.reply(...(standIns?.models?.openai ?? []));
    this.anthropic.reply(...(standIns?.models?.anthropic ?? []));
    const urls: Record<string, string> = { "{stand-in:http}": this.http.url, "{stand-in:qdrant}": this.qdrant.url };
    const resolved = Object.fromEntries(Object.entries(env ?? {}).map(([name, value]) => [name, urls[value] ?? value]));
    const outbound = {
      ...standInOutbound({ providers: { openai: { baseUrl: this.openai.baseUrl, apiKey: HOSTED_KEY }, anthropic: { baseUrl: this.anthropic.baseUrl, apiKey: HOSTED_KEY } } }),
      pricing: databaseModelPricing(callService),
    };
    return { env: resolved, services: { outbound } };
  }

  async close(): Promise<void> {
    await Promise.all([this.http.close(), this.qdrant.close(), this.openai.close(), this.anthropic.close()]);
  }
}
