/** LLM Router rules: unique route ids (each names an edge handle). */
import type { ConfigRule } from "../../state/config-rules.ts";

/** Unique route ids. */
export const llmRouterRules: readonly ConfigRule[] = [{ rule: "unique", list: "routes", field: "id", message: 'id "{id}" is used twice in routes' }];
