/**
 * Rules across the fields of one block's config, written as data. JSON Schema (the zod schemas)
 * checks each field on its own; these rules say how fields and list entries relate: ids unique in a
 * list, the first or last entry shaped a certain way, a field needed or forbidden when another has
 * a value, reserved names. Each block type declares its rules in its folder (blocks/<type>/rules.ts);
 * this module interprets them for the TypeScript validator, and `workflows_private.config_rule_issues`
 * interprets the same JSON in the database (migration `…_workflows-config-rules.sql`), so a new
 * block type needs no hand-written SQL. Rules run only on configs that passed their JSON Schema.
 *
 * Messages are templates: `{name}` is replaced by that field of the entry at fault (strings as
 * they are, other values as JSON, missing ones as nothing).
 */
import { z } from "zod";

const key = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/);
const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);

/** Which entries a rule applies to: those whose `field` is one of `in`, or is none of `notIn` (a missing field is in nothing). */
const entryFilter = z.union([z.object({ field: key, in: z.array(scalar).min(1) }).strict(), z.object({ field: key, notIn: z.array(scalar).min(1) }).strict()]);

const message = z.string().min(1);

/** The rule vocabulary both validators interpret. */
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
   * expression both engines read alike: anchors, classes, `+`); `{key}` in the message is the key
   * at fault as JSON text. Reported once per key, keys in the order of their UTF-8 bytes (the order
   * is the same in both interpreters, whatever order the object was written in).
   */
  z.object({ rule: z.literal("keys_match"), list: key.optional(), field: key, pattern: z.string().min(1), message }).strict(),
]);

/** One rule. */
export type ConfigRule = z.output<typeof configRuleSchema>;

/** Which entries a rule applies to. */
export type EntryFilter = z.output<typeof entryFilter>;

/** A problem a rule found: the field (a dotted path under the config's base) and the message. */
export interface RuleProblem {
  field: string;
  message: string;
}

type Entry = Record<string, unknown>;

function isEntry(value: unknown): value is Entry {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function matches(entry: Entry, filter: EntryFilter): boolean {
  const present = Object.hasOwn(entry, filter.field);
  const value = entry[filter.field];
  if ("in" in filter) return present && filter.in.some((candidate) => candidate === value);
  return !present || !filter.notIn.some((candidate) => candidate === value);
}

function has(entry: Entry, field: string, blankIsMissing: boolean | undefined): boolean {
  if (!Object.hasOwn(entry, field)) return false;
  const value = entry[field];
  return !(blankIsMissing && typeof value === "string" && value.trim() === "");
}

/** The text a template shows for an entry's field. */
function asText(value: unknown): string {
  if (value === undefined) return "";
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** Fills `{field}` placeholders from the entry. */
export function fillMessage(template: string, entry: Entry): string {
  return template.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, field: string) => asText(entry[field]));
}

const utf8 = new TextEncoder();

/** Keys in the order of their UTF-8 bytes (how Postgres compares bytea), not JavaScript's UTF-16 order. */
function byUtf8(keys: string[]): string[] {
  const encoded = keys.map((name) => ({ name, bytes: utf8.encode(name) }));
  encoded.sort((a, b) => {
    for (let index = 0; index < Math.min(a.bytes.length, b.bytes.length); index++) if (a.bytes[index] !== b.bytes[index]) return a.bytes[index] - b.bytes[index];
    return a.bytes.length - b.bytes.length;
  });
  return encoded.map((item) => item.name);
}

/** An entry a rule reads, with the path of its fields' parent. */
interface Located {
  entry: Entry;
  at: string;
}

const NO_ENTRIES: readonly Located[] = [];

/** The entries a rule reads (none for a missing or empty list). */
function entriesOf(config: Entry, list: string | undefined, base: string): readonly Located[] {
  if (list === undefined) return [{ entry: config, at: base }];
  const value = config[list];
  if (!Array.isArray(value) || value.length === 0) return NO_ENTRIES;
  const out: Located[] = [];
  value.forEach((entry, index) => {
    if (isEntry(entry)) out.push({ entry, at: `${base}.${list}[${index}]` });
  });
  return out;
}

function report(problems: RuleProblem[], at: string, field: string, template: string, entry: Entry): void {
  problems.push({ field: `${at}.${field}`, message: fillMessage(template, entry) });
}

/** Every problem `rules` find in `config`, rule by rule in order, entries in order; `base` prefixes fields. */
export function configRuleProblems(rules: readonly ConfigRule[], config: Record<string, unknown>, base: string): RuleProblem[] {
  const problems: RuleProblem[] = [];
  for (const rule of rules) {
    const entries = entriesOf(config, rule.list, base);
    if (entries.length === 0) continue;
    switch (rule.rule) {
      case "unique": {
        // Scalars only: lists and objects are never "the same id".
        const seen = new Set<unknown>();
        for (const { entry, at } of entries) {
          const value = entry[rule.field];
          if (value === undefined || (value !== null && typeof value === "object")) continue;
          if (seen.has(value)) report(problems, at, rule.field, rule.message, entry);
          seen.add(value);
        }
        break;
      }
      case "first_matches":
        if (entries.length > 0 && !matches(entries[0].entry, rule.where)) report(problems, entries[0].at, rule.where.field, rule.message, entries[0].entry);
        break;
      case "only_first":
        entries.forEach(({ entry, at }, index) => {
          if (index > 0 && matches(entry, rule.where)) report(problems, at, rule.where.field, rule.message, entry);
        });
        break;
      case "only_last":
        entries.forEach(({ entry, at }, index) => {
          if (index < entries.length - 1 && matches(entry, rule.where)) report(problems, at, rule.where.field, rule.message, entry);
        });
        break;
      case "requires":
        for (const { entry, at } of entries) if (matches(entry, rule.where) && !has(entry, rule.field, rule.blankIsMissing)) report(problems, at, rule.field, rule.message, entry);
        break;
      case "forbids":
        for (const { entry, at } of entries) if (matches(entry, rule.where) && has(entry, rule.field, rule.blankIsMissing)) report(problems, at, rule.field, rule.message, entry);
        break;
      case "reserved":
        for (const { entry, at } of entries) if (Object.hasOwn(entry, rule.field) && rule.values.some((value) => value === entry[rule.field])) report(problems, at, rule.field, rule.message, entry);
        break;
      case "keys_match": {
        const pattern = new RegExp(rule.pattern);
        for (const { entry, at } of entries) {
          const object = entry[rule.field];
          if (!isEntry(object)) continue;
          for (const name of byUtf8(Object.keys(object))) {
            if (!pattern.test(name)) report(problems, at, rule.field, rule.message, { ...entry, key: JSON.stringify(name) });
          }
        }
        break;
      }
    }
  }
  return problems;
}
