/**
 * The block catalogue: every block type, its category and the zod schema of its `config`. This is
 * the one source of truth for configs: the TypeScript validator parses with these schemas, and the
 * database validates saved drafts against their JSON Schema rendering (see json-schemas.ts), so
 * only constraints JSON Schema can express live here. Rules that span fields or blocks (condition
 * order, unique ids, handles) are structural rules in validation.ts and in SQL.
 */
import { z } from "zod";

/** How a block takes part in a run; the structural rules differ per category. */
export type BlockCategory = "trigger" | "control" | "core" | "container";

/** The Input Format field types of the spec's API trigger. */
export const INPUT_FIELD_TYPES = ["string", "number", "boolean", "json", "files"] as const;

/** An identifier usable as `<block.fieldName>` and as a JavaScript property name. */
const identifier = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/);

/** Ids of conditions and routes end up in edge handles (`condition-<id>`), so they stay simple. */
const handleId = z.string().regex(/^[A-Za-z0-9_-]+$/);

/** A value that is either a literal number or a template such as `<api.count>` resolving to one. */
const numberOrTemplate = (number: z.ZodNumber) => z.union([number, z.string().min(1)]);

/** One row of an Input Format. `value` is the editor's value column, used by manual runs only. */
export const inputFieldSchema = z
  .object({
    name: identifier,
    type: z.enum(INPUT_FIELD_TYPES),
    value: z.unknown().optional(),
    description: z.string().optional(),
  })
  .strict();

const inputFormatConfig = z.object({ inputFormat: z.array(inputFieldSchema).max(100).optional() }).strict();

/** Per-block timeout override, in milliseconds (the run's own timeout still applies). */
const timeoutMs = (max: number) => z.number().int().min(1).max(max).optional();

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
export const OPERANDLESS_OPERATORS: ReadonlySet<string> = new Set(["exists", "not_exists", "default"]);

/** The longest a Wait block may pause in process (Sim's limit); longer waits belong in a schedule. */
export const MAX_WAIT_MS = 5 * 60_000;

/** Longest run a Function block may ask for; the sandbox's own default is far lower. */
export const MAX_FUNCTION_TIMEOUT_MS = 60_000;

/** Largest heap a Function block may ask for, in MiB. */
export const MAX_FUNCTION_MEMORY_MB = 128;

/** Most iterations of a loop, and most branches of a parallel (decisions, "Executor semantics"). */
export const MAX_ITERATIONS = 1000;

/** Most parallel branches in flight at once; more branches run in a sliding window. */
export const MAX_CONCURRENT_BRANCHES = 20;

const conditionConfig = z
  .object({
    conditions: z
      .array(
        z
          .object({
            id: handleId,
            kind: z.enum(["if", "else if", "else"]),
            expression: z.string().optional(),
          })
          .strict(),
      )
      .min(1)
      .max(50),
    timeoutMs: timeoutMs(MAX_FUNCTION_TIMEOUT_MS),
  })
  .strict();

const routerConfig = z
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

const functionConfig = z
  .object({
    code: z.string(),
    timeoutMs: timeoutMs(MAX_FUNCTION_TIMEOUT_MS),
    memoryLimitMb: z.number().int().min(1).max(MAX_FUNCTION_MEMORY_MB).optional(),
  })
  .strict();

const variablesConfig = z
  .object({ assignments: z.array(z.object({ name: identifier, value: z.unknown() }).strict()).max(100) })
  .strict();

const waitConfig = z
  .object({
    amount: numberOrTemplate(z.number().min(0)),
    unit: z.enum(["ms", "seconds", "minutes"]),
    timeoutMs: timeoutMs(MAX_WAIT_MS + 60_000),
  })
  .strict();

const responseConfig = z
  .object({
    status: numberOrTemplate(z.number().int().min(100).max(599)).optional(),
    headers: z.record(z.string(), z.string()).optional(),
    body: z.unknown().optional(),
  })
  .strict();

const scheduleConfig = z
  .object({
    // Five cron fields (minute resolution, as pg_cron); the scheduler itself checks them in full.
    cronExpression: z.string().regex(/^\s*\S+(\s+\S+){4}\s*$/),
    timezone: z.string().min(1).optional(),
  })
  .strict();

const emptyConfig = z.object({}).strict();

/** One entry of the catalogue. */
export interface BlockTypeInfo {
  category: BlockCategory;
  /** One line for docs and error messages. */
  summary: string;
  configSchema: z.ZodType;
}

/** Every block type the service knows. Adding one means a handler in blocks/ and a migration. */
export const BLOCK_TYPES = {
  api_trigger: {
    category: "trigger",
    summary: "Starts a run from POST /api/workflows/{id}/execute; typed fields from its Input Format.",
    configSchema: inputFormatConfig,
  },
  manual_trigger: {
    category: "trigger",
    summary: "Starts a run from the editor; inputs are the Input Format's value column.",
    configSchema: inputFormatConfig,
  },
  generic_webhook: {
    category: "trigger",
    summary: "Starts a run from an incoming webhook; the request body, typed by an optional Input Format.",
    configSchema: inputFormatConfig,
  },
  schedule: {
    category: "trigger",
    summary: "Starts a run on a cron schedule.",
    configSchema: scheduleConfig,
  },
  condition: {
    category: "control",
    summary: "if / else if / else over sandboxed JavaScript expressions; one branch stays active.",
    configSchema: conditionConfig,
  },
  router: {
    category: "control",
    summary: "Rule-based switch: the first route whose rule matches the value stays active.",
    configSchema: routerConfig,
  },
  function: {
    category: "core",
    summary: "Runs user JavaScript in a sandbox; its return value is the block's result.",
    configSchema: functionConfig,
  },
  variables: {
    category: "core",
    summary: "Sets workflow variables, readable later as <variable.name>.",
    configSchema: variablesConfig,
  },
  wait: {
    category: "core",
    summary: "Pauses this branch for a while (at most 5 minutes).",
    configSchema: waitConfig,
  },
  response: {
    category: "core",
    summary: "Ends the run with an HTTP status, headers and body.",
    configSchema: responseConfig,
  },
  loop: {
    category: "container",
    summary: "Runs its body `for` a count or `forEach` item of a collection, one iteration at a time.",
    configSchema: emptyConfig,
  },
  parallel: {
    category: "container",
    summary: "Runs its body once per count or collection item, up to 20 branches at once.",
    configSchema: emptyConfig,
  },
} as const satisfies Record<string, BlockTypeInfo>;

/** A block type name. */
export type BlockType = keyof typeof BLOCK_TYPES;

/** The parsed config of a block type. */
export type BlockConfig<T extends BlockType> = z.output<(typeof BLOCK_TYPES)[T]["configSchema"]>;

/** One Input Format field, parsed. */
export type InputField = z.output<typeof inputFieldSchema>;

/** True when `type` names a known block type. */
export function isBlockType(type: string): type is BlockType {
  return Object.hasOwn(BLOCK_TYPES, type);
}

/** Maps each trigger block type to the trigger kind of a run it starts. */
export const TRIGGER_KINDS = {
  api_trigger: "api",
  manual_trigger: "manual",
  generic_webhook: "webhook",
  schedule: "schedule",
} as const satisfies Partial<Record<BlockType, string>>;
