import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * While the project is unreleased, every database object has one readable live definition: a
 * function is created once, in its home migration, and a change edits that body (docs/database.md).
 * This test reads the migration files only; it needs no stack.
 */

const MIGRATIONS = join(import.meta.dirname, "..", "..", "supabase", "migrations");

/** Blanks comments, string literals and dollar-quoted bodies, so only top-level SQL is matched. */
function topLevelSql(sql: string): string {
  let out = "";
  let i = 0;
  while (i < sql.length) {
    if (sql.startsWith("--", i)) {
      const end = sql.indexOf("\n", i);
      i = end < 0 ? sql.length : end;
    } else if (sql.startsWith("/*", i)) {
      let depth = 0;
      do {
        if (sql.startsWith("/*", i)) (depth++, (i += 2));
        else if (sql.startsWith("*/", i)) (depth--, (i += 2));
        else i++;
      } while (depth > 0 && i < sql.length);
      out += " ";
    } else if (sql[i] === "'") {
      i++;
      while (i < sql.length && !(sql[i] === "'" && sql[i + 1] !== "'")) i += sql[i] === "'" ? 2 : 1;
      i++;
      out += "''";
    } else if (sql[i] === "$" && !/[\w$]/.test(sql[i - 1] ?? "")) {
      const tag = /^\$(?:[A-Za-z_]\w*)?\$/.exec(sql.slice(i))?.[0];
      if (!tag) (out += sql[i], i++);
      else {
        const end = sql.indexOf(tag, i + tag.length);
        i = end < 0 ? sql.length : end + tag.length;
        out += "$$ $$";
      }
    } else {
      out += sql[i];
      i++;
    }
  }
  return out;
}

const TYPE_ALIASES: Record<string, string> = {
  int: "integer", int4: "integer", int8: "bigint", int2: "smallint", bool: "boolean", float8: "double precision",
  float4: "real", "timestamp with time zone": "timestamptz", "timestamp without time zone": "timestamp",
  "character varying": "varchar", "time with time zone": "timetz",
};
/** Type names of more than one word, whose first word is not an argument name. */
const MULTIWORD_TYPE_STARTS = ["double", "character", "timestamp", "time", "bit"];

/** One argument's type as Postgres identifies the function by it, or null for an OUT argument. */
function argumentType(argument: string): string | null {
  let words = argument.split(/\s+(?:default\s|=)/i)[0].trim().toLowerCase().split(/\s+/);
  const mode = ["in", "out", "inout", "variadic"].includes(words[0]) ? words.shift() : "in";
  if (mode === "out") return null;
  const multiword = words.length > 1 && MULTIWORD_TYPE_STARTS.includes(words[0]) && !/\w\s/.test(words.slice(1).join(" ").replace(/^(precision|varying|with(out)? time zone|\(\d+\))/, ""));
  if (words.length > 1 && !multiword) words = words.slice(1);
  const type = words.join(" ").replace(/^public\./, "").replace(/\s*\[\]/g, "[]");
  return TYPE_ALIASES[type] ?? type;
}

/** `schema.name(type, …)` for every `create [or replace] function|procedure` in a migration. */
export function createdFunctions(sql: string): string[] {
  const text = topLevelSql(sql);
  const found: string[] = [];
  for (const match of text.matchAll(/\bcreate\s+(?:or\s+replace\s+)?(?:function|procedure)\s+([\w."]+)\s*\(/gi)) {
    let depth = 1;
    let end = match.index + match[0].length;
    while (depth > 0 && end < text.length) depth += text[end] === "(" ? 1 : text[end] === ")" ? -1 : 0, end++;
    const args: string[] = [];
    let current = "";
    let nested = 0;
    for (const char of text.slice(match.index + match[0].length, end - 1)) {
      if (char === "," && nested === 0) (args.push(current), (current = ""));
      else {
        nested += char === "(" ? 1 : char === ")" ? -1 : 0;
        current += char;
      }
    }
    if (current.trim()) args.push(current);
    const name = match[1].replaceAll('"', "").toLowerCase();
    const types = args.map(argumentType).filter((type) => type !== null);
    found.push(`${name.includes(".") ? name : `public.${name}`}(${types.join(", ")})`);
  }
  return found;
}

describe("one readable live definition per database object", () => {
  const files = readdirSync(MIGRATIONS).filter((name) => name.endsWith(".sql")).sort();

  it("reads function signatures the way Postgres identifies them", () => {
    expect(createdFunctions(`
      -- create function commented.out(int)
      create or replace function public.a(p_x int, p_y text default 'create function b()', out p_z uuid) returns uuid
      language sql as $$ select gen_random_uuid() $$;
      create function b(double precision, p_when timestamp with time zone, variadic p_rest text[]) returns void
      language plpgsql as $body$ begin execute 'create function c()'; end; $body$;
    `)).toEqual(["public.a(integer, text)", "public.b(double precision, timestamptz, text[])"]);
  });

  it("creates every SQL function once: a change edits the body in its home migration", () => {
    const homes = new Map<string, string[]>();
    for (const file of files) {
      for (const signature of createdFunctions(readFileSync(join(MIGRATIONS, file), "utf8"))) {
        homes.set(signature, [...(homes.get(signature) ?? []), file]);
      }
    }
    const redefined = [...homes].filter(([, where]) => where.length > 1).map(([signature, where]) => `${signature}: ${where.join(", ")}`);
    expect(redefined, "functions created in more than one place").toEqual([]);
    expect(homes.size).toBeGreaterThan(200);
  });

  it("names every migration once after its timestamp", () => {
    const byName = new Map<string, string[]>();
    for (const file of files) {
      const name = file.replace(/^\d+_/, "");
      byName.set(name, [...(byName.get(name) ?? []), file]);
    }
    expect([...byName.values()].filter((same) => same.length > 1), "migrations sharing a name").toEqual([]);
    expect(files.every((file) => /^\d{14}_[a-z0-9]+(-[a-z0-9]+)+\.sql$/.test(file)), "names are <timestamp>_<domain>-<subject>.sql").toBe(true);
  });
});
