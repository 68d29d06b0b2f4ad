/**
 * Rules across the fields of one block's config, written as data. JSON Schema (the zod schemas)
 * checks each field on its own; these rules say how fields and list entries relate: ids unique in a
 * list, the first or last entry shaped a certain way, a field needed or forbidden when another has
 * a value, reserved names. Each block type declares its rules in its folder (blocks/<type>/rules.ts);
 * the catalogue stores them, and `workflows_private.config_rule_problems` (migration
 * `…_workflows-config-rules.sql`) interprets them, so a new block type needs no hand-written SQL.
 * This module is the vocabulary the block folders write and the interpreter reads. Rules run only
 * on configs that passed their JSON Schema.
 *
 * Messages are templates: `{name}` is replaced by that field of the entry at fault (strings as
 * they are, other values as JSON the way Postgres prints it, `{"x": 1}`, missing ones as nothing).
 */
import { z } from "zod";

const key = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/);
const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);

/** Which entries a rule applies to: those whose `field` is one of `in`, or is none of `notIn` (a missing field is in nothing). */
const entryFilter = z.union([z.object({ field: key, in: z.array(scalar).min(1) }).strict(), z.object({ field: key, notIn: z.array(scalar).min(1) }).strict()]);

const message = z.string().min(1);

/** The rule vocabulary (test/workflows/config-rules.test.ts shows how the database reads each kind). */
export const configRuleSchema = z.discriminatedUnion("rule", [
  /** No two entries of `list` have the same scalar `field`; reported on each repeat. */
  z.object({ rule: z.literal("unique"), list: key, field: key, message }).strict(),
  /** The first entry of `list` must match `where`; reported on its `where.field`. */
  z.object({ rule: z.literal("first_matches"), list: key, where: entryFilter, message }).strict(),
  /** Entries matching `where` may only be the first of `list`. */
  z.object({ rule: z.literal("only_first"), list: key, where: entryFilter, message }).strict(),
  /** Entries matching `where` may only be the last of `list`. */
  z.object({ rule: z.literal("only_last"), list: key, where: entryFilter, message }).strict(),
  /**
   * Entries of `list` (or the config itself, without `list`) matching `where` must have `field`;
   * with `blankIsMissing`, text of only whitespace counts as missing.
   */
  z.object({ rule: z.literal("requires"), list: key.optional(), where: entryFilter, field: key, blankIsMissing: z.boolean().optional(), message }).strict(),
  /** Entries (or the config) matching `where` must not have `field` (blank text allowed with `blankIsMissing`). */
  z.object({ rule: z.literal("forbids"), list: key.optional(), where: entryFilter, field: key, blankIsMissing: z.boolean().optional(), message }).strict(),
  /** `field` of an entry (or of the config) may not be one of `values`. */
  z.object({ rule: z.literal("reserved"), list: key.optional(), field: key, values: z.array(scalar).min(1), message }).strict(),
  /**
   * Every key of the object `field` of an entry (or of the config) matches `pattern` (a regular
   * expression Postgres reads: anchors, classes, `+`); `{key}` in the message is the key at fault
   * as JSON text. Reported once per key, keys in the order of their UTF-8 bytes (whatever order
   * the object was written in).
   */
  z.object({ rule: z.literal("keys_match"), list: key.optional(), field: key, pattern: z.string().min(1), message }).strict(),
]);

/** One rule. */
export type ConfigRule = z.output<typeof configRuleSchema>;
