/**
 * What blocks that reach outside the run use, as one injectable service of the engine
 * (`ExecutorServices.outbound`): the guarded fetch, the hosted model-provider endpoints and the
 * model prices. By default the process's own (guardedFetch with OUTBOUND_ALLOWED_HOSTS, the
 * provider variables, `public.model_prices`); tests pass stand-ins.
 */
import { guardedFetch, type GuardedFetchInit } from "./guard.ts";
import { databasePriceSource, type PriceSource } from "./model-prices.ts";
import { hostedProvidersFromEnv, type HostedProviders } from "./providers/settings.ts";

/** A fetch with guardedFetch's checks and options. */
export type OutboundFetch = (url: string | URL, init?: GuardedFetchInit) => Promise<Response>;

/** The outside world as blocks see it. */
export interface OutboundServices {
  fetch: OutboundFetch;
  providers: HostedProviders;
  prices: PriceSource;
}

let defaults: OutboundServices | null = null;

/** This instance's outbound services, made on first use (the environment is read then). */
export function defaultOutboundServices(): OutboundServices {
  defaults ??= { fetch: guardedFetch, providers: hostedProvidersFromEnv(), prices: databasePriceSource() };
  return defaults;
}
