/**
 * Outbound services for engine and block tests that call the stand-ins on this machine: the real
 * guarded fetch with loopback allowed (as `npm test` configures the stack), and the given provider
 * endpoints and prices instead of the environment's and the database's.
 */
import { parseAllowList } from "../../supabase/functions/_shared/workflows/outbound/addresses.ts";
import { guardedFetch, type OutboundPolicy } from "../../supabase/functions/_shared/workflows/outbound/guard.ts";
import { fixedPriceSource, type ModelPriceRow } from "../../supabase/functions/_shared/workflows/outbound/model-prices.ts";
import { DEFAULT_BASE_URLS, type HostedProviders } from "../../supabase/functions/_shared/workflows/outbound/providers/settings.ts";
import type { OutboundServices } from "../../supabase/functions/_shared/workflows/outbound/services.ts";
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

/** Outbound services for tests: loopback reachable, providers and prices as given. */
export function standInOutbound(options: { providers?: HostedProviders; prices?: readonly ModelPriceRow[]; policy?: OutboundPolicy } = {}): OutboundServices {
  const policy = options.policy ?? LOOPBACK_POLICY;
  return {
    fetch: (url, init) => guardedFetch(url, { ...init, policy }),
    providers: options.providers ?? NO_PROVIDERS,
    prices: fixedPriceSource(options.prices ?? []),
  };
}
