/** Agent rules: tool names are unique (the model calls tools by name). */
import type { ConfigRule } from "../../state/config-rules.ts";

/** Unique tool names. */
export const agentRules: readonly ConfigRule[] = [{ rule: "unique", list: "tools", field: "name", message: 'tool name "{name}" is used twice in tools' }];
