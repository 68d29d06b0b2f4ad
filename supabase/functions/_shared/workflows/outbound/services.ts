/**
 * What blocks that reach outside the run use, as one injectable service of the engine
 * (`ExecutorServices.outbound`): the guarded fetch, the hosted model-provider endpoints and the
 * pricing of model usage. By default the process's own (guardedFetch with OUTBOUND_ALLOWED_HOSTS,
 * the provider variables, `public.price_model_usage` over the runtime's service-role pool); tests
 * pass stand-ins.
 */
import { callService } from "../../db/service-calls.ts";
import { guardedFetch, type GuardedFetchInit } from "./guard.ts";
import { databaseModelPricing, type ModelPricing } from "./model-cost.ts";
import { hostedProvidersFromEnv, type HostedProviders } from "./providers/settings.ts";

/** A fetch with guardedFetch's checks and options. */
export type OutboundFetch = (url: string | URL, init?: GuardedFetchInit) => Promise<Response>;

/** The outside world as blocks see it. */
export interface OutboundServices {
  fetch: OutboundFetch;
  providers: HostedProviders;
  pricing: ModelPricing;
}

let defaults: OutboundServices | null = null;

/** This instance's outbound services, made on first use (the environment is read then). */
export function defaultOutboundServices(): OutboundServices {
  defaults ??= { fetch: guardedFetch, providers: hostedProvidersFromEnv(), pricing: databaseModelPricing(callService) };
  return defaults;
}
