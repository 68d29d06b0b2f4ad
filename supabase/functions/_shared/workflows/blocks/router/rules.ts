/** Router rules: unique route ids, `default` last, an operand for every operator that compares. */
import type { ConfigRule } from "../../state/config-rules.ts";
import { OPERANDLESS_OPERATORS } from "./config.ts";

/** The order and operands of a Router's routes. */
export const routerRules: readonly ConfigRule[] = [
  { rule: "unique", list: "routes", field: "id", message: 'id "{id}" is used twice in routes' },
  { rule: "only_last", list: "routes", where: { field: "operator", in: ["default"] }, message: 'the "default" route must be the last one' },
  { rule: "requires", list: "routes", where: { field: "operator", notIn: [...OPERANDLESS_OPERATORS] }, field: "operand", message: 'operator "{operator}" needs an operand' },
];
