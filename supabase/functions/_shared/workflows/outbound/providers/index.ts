/** The chat protocol of each provider. */
import { anthropicProvider } from "./anthropic.ts";
import type { ChatProvider } from "./chat.ts";
import { openAiProvider } from "./openai.ts";
import type { ProviderName } from "./settings.ts";

/** The protocol spoken to each provider. */
export const CHAT_PROVIDERS: Readonly<Record<ProviderName, ChatProvider>> = { openai: openAiProvider, anthropic: anthropicProvider };
