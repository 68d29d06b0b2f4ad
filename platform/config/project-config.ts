import { existsSync, readFileSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { parse } from "smol-toml";
import { PROJECT_ROOT, type ProfileName } from "./stack-config.ts";

/** A TOML table as parsed. */
export type ConfigTable = Record<string, unknown>;

/** The project's supabase/config.toml, which `supabase start` reads. */
export const PROJECT_CONFIG_FILE = join(PROJECT_ROOT, "supabase", "config.toml");

/**
 * Settings only the test stack has, written with config.toml's own keys and merged over it: the
 * switches the CLI's template leaves off (anonymous sign-ins, TOTP, test phone numbers, signing
 * keys) are on there, so the suites can prove those flows against a running stack.
 */
export const TEST_CONFIG_FILE = join(PROJECT_ROOT, "test", "fixtures", "config.toml");

/** A value as a table (an absent or mistyped section reads as empty, as the CLI's defaults apply). */
export function table(value: unknown): ConfigTable {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as ConfigTable) : {};
}

/** Tables merge key by key; anything else in `over` replaces what `base` has. */
function merge(base: ConfigTable, over: ConfigTable): ConfigTable {
  const merged: ConfigTable = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const current = merged[key];
    const bothTables = value !== null && typeof value === "object" && !Array.isArray(value) && current !== null && typeof current === "object" && !Array.isArray(current);
    merged[key] = bothTables ? merge(current as ConfigTable, value as ConfigTable) : value;
  }
  return merged;
}

/** Paths in a config file are relative to the folder holding it, as the CLI reads `signing_keys_path`. */
function anchorPaths(auth: ConfigTable, folder: string): ConfigTable {
  const path = auth.signing_keys_path;
  if (typeof path !== "string" || path === "" || isAbsolute(path)) return auth;
  return { ...auth, signing_keys_path: resolve(folder, path) };
}

function readToml(file: string): ConfigTable {
  if (!existsSync(file)) return {};
  const parsed = table(parse(readFileSync(file, "utf8")));
  const auth = table(parsed.auth);
  return Object.keys(auth).length > 0 ? { ...parsed, auth: anchorPaths(auth, dirname(file)) } : parsed;
}

/** config.toml as a stack of `profile` sees it: the test stack's settings merged over the project's. */
export function readProjectConfig(profile: ProfileName, file = PROJECT_CONFIG_FILE): ConfigTable {
  const base = readToml(file);
  return profile === "test" ? merge(base, readToml(TEST_CONFIG_FILE)) : base;
}
