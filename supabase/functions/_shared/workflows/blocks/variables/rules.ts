/** Variables rules: each name is assigned once per block. */
import type { ConfigRule } from "../../state/config-rules.ts";

/** Unique assignment names. */
export const variablesRules: readonly ConfigRule[] = [{ rule: "unique", list: "assignments", field: "name", message: 'name "{name}" is used twice in assignments' }];
