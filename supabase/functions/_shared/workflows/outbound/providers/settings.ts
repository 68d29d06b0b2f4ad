/**
 * The model providers the service speaks to, and the platform's own (hosted) endpoint and key for
 * each, from the environment: `OPENAI_BASE_URL` / `OPENAI_API_KEY` and `ANTHROPIC_BASE_URL` /
 * `ANTHROPIC_API_KEY`. The base URLs default to the providers' own; any server speaking the same
 * wire protocol can stand in (the tests' stand-ins, a local model server, a gateway).
 */
import { readEnv } from "../../../config/env.ts";

/** The wire protocols spoken: OpenAI-compatible chat completions, Anthropic messages. */
export type ProviderName = "openai" | "anthropic";

/** Every provider name, in the order docs list them. */
export const PROVIDER_NAMES: readonly ProviderName[] = ["openai", "anthropic"];

/** Where a provider is reached and with which key (null: none configured). */
export interface ProviderEndpoint {
  baseUrl: string;
  apiKey: string | null;
}

/** The platform's own endpoint and key per provider. */
export type HostedProviders = Readonly<Record<ProviderName, ProviderEndpoint>>;

/** The providers' public base URLs. */
export const DEFAULT_BASE_URLS: Readonly<Record<ProviderName, string>> = {
  openai: "https://api.openai.com/v1",
  anthropic: "https://api.anthropic.com",
};

const VARIABLES: Readonly<Record<ProviderName, { baseUrl: string; apiKey: string }>> = {
  openai: { baseUrl: "OPENAI_BASE_URL", apiKey: "OPENAI_API_KEY" },
  anthropic: { baseUrl: "ANTHROPIC_BASE_URL", apiKey: "ANTHROPIC_API_KEY" },
};

/** The hosted endpoints as the environment sets them. */
export function hostedProvidersFromEnv(): HostedProviders {
  const endpoint = (name: ProviderName): ProviderEndpoint => ({
    baseUrl: (readEnv(VARIABLES[name].baseUrl) || DEFAULT_BASE_URLS[name]).replace(/\/+$/, ""),
    apiKey: readEnv(VARIABLES[name].apiKey) || null,
  });
  return { openai: endpoint("openai"), anthropic: endpoint("anthropic") };
}

/** The provider a model id belongs to (`gpt-…`, `o1`/`o3`/`o4-…`, `chatgpt-…` → openai; `claude-…` → anthropic), or null. */
export function providerOfModel(model: string): ProviderName | null {
  if (/^claude-/i.test(model)) return "anthropic";
  if (/^(gpt-|chatgpt-|o\d)/i.test(model)) return "openai";
  return null;
}
