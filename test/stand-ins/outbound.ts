/**
 * Outbound services for engine and block tests that call the stand-ins on this machine: the real
 * guarded fetch with loopback allowed (as `npm test` configures the stack), and the given provider
 * endpoints and model costs instead of the environment's and the database's.
 */
import { parseAllowList } from "../../supabase/functions/_shared/workflows/outbound/addresses.ts";
import { guardedFetch, type OutboundPolicy } from "../../supabase/functions/_shared/workflows/outbound/guard.ts";
import type { ModelCost, ModelPricing, ModelUsage } from "../../supabase/functions/_shared/workflows/outbound/model-cost.ts";
import { DEFAULT_BASE_URLS, type HostedProviders } from "../../supabase/functions/_shared/workflows/outbound/providers/settings.ts";
import type { OutboundServices } from "../../supabase/functions/_shared/workflows/outbound/services.ts";
import { isDeepStrictEqual } from "node:util";
import { lookup } from "node:dns/promises";

/** Loopback allowed, names resolved by the system (localhost). */
export const LOOPBACK_POLICY: OutboundPolicy = {
  allow: parseAllowList("127.0.0.0/8,::1"),
  resolve: async (host) => (await lookup(host, { all: true })).map((answer) => answer.address),
};

/** No provider configured: calls need the block's own key and base URL. */
const NO_PROVIDERS: HostedProviders = {
  openai: { baseUrl: DEFAULT_BASE_URLS.openai, apiKey: null },
  anthropic: { baseUrl: DEFAULT_BASE_URLS.anthropic, apiKey: null },
};

/** A cost the stand-in pricing answers for exactly this usage. */
export interface StandInCost {
  usage: ModelUsage;
  cost: ModelCost;
}

/**
 * Pricing that answers the given cost for a usage it lists and 0 for any other, as the database
 * does for a model without a price. The formula itself is the database's, tested in pgTAP and
 * test/workflows/blocks-hosted-models.test.ts; block tests check what is asked and reported.
 */
function standInPricing(costs: readonly StandInCost[]): ModelPricing {
  return (usage) => Promise.resolve(costs.find((entry) => isDeepStrictEqual(entry.usage, usage))?.cost ?? { input: 0, output: 0, total: 0 });
}

/** Outbound services for tests: loopback reachable, providers and model costs as given. */
export function standInOutbound(options: { providers?: HostedProviders; costs?: readonly StandInCost[]; policy?: OutboundPolicy } = {}): OutboundServices {
  const policy = options.policy ?? LOOPBACK_POLICY;
  return {
    fetch: (url, init) => guardedFetch(url, { ...init, policy }),
    providers: options.providers ?? NO_PROVIDERS,
    pricing: standInPricing(options.costs ?? []),
  };
}
