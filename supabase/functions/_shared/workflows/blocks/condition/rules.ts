/** Condition rules: unique ids, `if` first and only first, `else` last and without an expression. */
import type { ConfigRule } from "../../state/config-rules.ts";

/** The order and expressions of a Condition's entries. */
export const conditionRules: readonly ConfigRule[] = [
  { rule: "unique", list: "conditions", field: "id", message: 'id "{id}" is used twice in conditions' },
  { rule: "first_matches", list: "conditions", where: { field: "kind", in: ["if"] }, message: 'the first condition must be "if"' },
  { rule: "only_first", list: "conditions", where: { field: "kind", in: ["if"] }, message: 'only the first condition may be "if"; use "else if"' },
  { rule: "only_last", list: "conditions", where: { field: "kind", in: ["else"] }, message: '"else" must be the last condition' },
  { rule: "forbids", list: "conditions", where: { field: "kind", in: ["else"] }, field: "expression", blankIsMissing: true, message: 'an "else" condition takes no expression' },
  { rule: "requires", list: "conditions", where: { field: "kind", notIn: ["else"] }, field: "expression", blankIsMissing: true, message: '"{kind}" needs an expression' },
];
