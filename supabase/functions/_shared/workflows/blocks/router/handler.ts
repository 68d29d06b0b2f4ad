/**
 * Router (rule-based): compares one value against each route's rule, in order; the first match (or
 * the `default` route) is chosen and only its `router-<id>` edges stay active. No match and no
 * default fails the block with NO_ROUTE, so an `error` edge can take over. `matches` runs the
 * user's regular expression in the sandbox, so a catastrophic pattern cannot stall the server.
 */
import { DEFAULT_SANDBOX_MEMORY_BYTES } from "../../core/sandbox-contract.ts";
import { ROUTER_HANDLE_PREFIX } from "./config.ts";
import { WorkflowError } from "../../core/errors.ts";
import { preview } from "../../core/values.ts";
import { DEFAULT_BLOCK_TIMEOUT_MS, type BlockHandler, type BlockRun } from "../../core/block-handler.ts";

interface Route {
  id: string;
  title?: string;
  operator: string;
  operand?: unknown;
}

interface RouterInput {
  value: unknown;
  routes: Route[];
}

/** Structural equality of JSON values (key order does not matter). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((item, index) => jsonEqual(item, b[index]));
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = Object.keys(left);
  return keys.length === Object.keys(right).length && keys.every((key) => Object.hasOwn(right, key) && jsonEqual(left[key], right[key]));
}

function toNumber(value: unknown): number | null {
  if (typeof value === "number" && Number.isFinite(value)) return value;
  if (typeof value === "string" && value.trim() !== "") {
    const parsed = Number(value);
    return Number.isFinite(parsed) ? parsed : null;
  }
  return null;
}

function compare(value: unknown, operand: unknown, test: (a: number, b: number) => boolean): boolean {
  const a = toNumber(value);
  const b = toNumber(operand);
  return a !== null && b !== null && test(a, b);
}

function contains(value: unknown, operand: unknown): boolean {
  if (typeof value === "string") return typeof operand === "string" && value.includes(operand);
  if (Array.isArray(value)) return value.some((item) => jsonEqual(item, operand));
  return false;
}

async function matches(value: unknown, operand: unknown, run: BlockRun<RouterInput>): Promise<boolean> {
  if (typeof operand !== "string") throw new WorkflowError("BLOCK_FAILED", `a "matches" operand must be a regular expression string (got ${preview(operand)})`);
  const literal = /^\/(.*)\/([a-z]*)$/s.exec(operand);
  const { value: result } = await run.services.sandbox.run({
    kind: "expression",
    source: "new RegExp(__refs[0], __refs[1]).test(__refs[2])",
    values: [literal ? literal[1] : operand, literal ? literal[2] : "", typeof value === "string" ? value : JSON.stringify(value)],
    deadline: run.runDeadline,
    timeoutMs: run.timeoutMs,
    memoryBytes: DEFAULT_SANDBOX_MEMORY_BYTES,
    signal: run.signal,
    owner: run.executionId,
    account: run.account ?? undefined,
  });
  return result === true;
}

/** Whether a route's rule holds for the value. */
async function ruleHolds(route: Route, value: unknown, run: BlockRun<RouterInput>): Promise<boolean> {
  const { operand } = route;
  switch (route.operator) {
    case "equals":
      return jsonEqual(value, operand);
    case "not_equals":
      return !jsonEqual(value, operand);
    case "contains":
      return contains(value, operand);
    case "not_contains":
      return !contains(value, operand);
    case "starts_with":
      return typeof value === "string" && typeof operand === "string" && value.startsWith(operand);
    case "ends_with":
      return typeof value === "string" && typeof operand === "string" && value.endsWith(operand);
    case "matches":
      return await matches(value, operand, run);
    case "gt":
      return compare(value, operand, (a, b) => a > b);
    case "gte":
      return compare(value, operand, (a, b) => a >= b);
    case "lt":
      return compare(value, operand, (a, b) => a < b);
    case "lte":
      return compare(value, operand, (a, b) => a <= b);
    case "in":
      return Array.isArray(operand) && operand.some((item) => jsonEqual(item, value));
    case "exists":
      return value !== null && value !== undefined && value !== "";
    case "not_exists":
      return value === null || value === undefined || value === "";
    case "default":
      return true;
    default:
      throw new WorkflowError("BLOCK_FAILED", `unknown operator "${route.operator}"`);
  }
}

/** Handler of `router` blocks. */
export const routerHandler: BlockHandler<RouterInput> = {
  timeoutMs: () => DEFAULT_BLOCK_TIMEOUT_MS,
  stopsAtDeadline: true,
  async execute(run) {
    for (const route of run.input.routes) {
      if (await ruleHolds(route, run.input.value, run)) {
        const target = run.targetsOf(`${ROUTER_HANDLE_PREFIX}${route.id}`)[0] ?? null;
        return {
          value: run.input.value ?? null,
          selectedRoute: route.id,
          routeTitle: route.title ?? null,
          selectedPath: target && { blockId: target.id, blockName: target.name, blockType: target.type },
        };
      }
    }
    throw new WorkflowError("NO_ROUTE", `no route matches the value ${preview(run.input.value)} and there is no default route`);
  },
};
