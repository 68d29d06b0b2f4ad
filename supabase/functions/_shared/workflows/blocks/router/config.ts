/** Router config: the value to look at and the routes, each an operator with its operand. */
import { z } from "zod";
import { handleId } from "../config-parts.ts";

/** `router-<routeId>`: followed when the Router chose that route. */
export const ROUTER_HANDLE_PREFIX = "router-";

/** Comparison operators of the rule-based Router; `default` matches when no earlier route did. */
export const ROUTER_OPERATORS = [
  "equals",
  "not_equals",
  "contains",
  "not_contains",
  "starts_with",
  "ends_with",
  "matches",
  "gt",
  "gte",
  "lt",
  "lte",
  "in",
  "exists",
  "not_exists",
  "default",
] as const;

/** Router operators that take no operand. */
export const OPERANDLESS_OPERATORS = ["exists", "not_exists", "default"] as const;

/** The config of a `router` block. */
export const routerConfigSchema = z
  .object({
    value: z.unknown(),
    routes: z
      .array(
        z
          .object({
            id: handleId,
            title: z.string().optional(),
            operator: z.enum(ROUTER_OPERATORS),
            operand: z.unknown().optional(),
          })
          .strict(),
      )
      .min(1)
      .max(50),
  })
  .strict();
