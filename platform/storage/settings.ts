import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "smol-toml";
import { PROJECT_ROOT } from "../config/stack-config.ts";
import { PlatformError } from "../process/errors.ts";
import { parseConfigSize } from "./sizes.ts";

/** The Storage settings the CLI takes from `[storage]` in supabase/config.toml. */
export interface StorageSettings {
  /** Largest object any bucket accepts, in bytes (a bucket may lower it, never raise it). */
  fileSizeLimit: number;
}

/** The CLI's default when config.toml does not say. */
const DEFAULT_FILE_SIZE_LIMIT = 50 * 1024 ** 2;

interface StorageSection {
  file_size_limit?: string | number;
}

/** Reads `[storage] file_size_limit`; a malformed value stops the platform, as it stops `supabase start`. */
export function loadStorageSettings(configFile = join(PROJECT_ROOT, "supabase", "config.toml")): StorageSettings {
  if (!existsSync(configFile)) return { fileSizeLimit: DEFAULT_FILE_SIZE_LIMIT };
  const toml = parse(readFileSync(configFile, "utf8")) as { storage?: StorageSection };
  const raw = toml.storage?.file_size_limit;
  if (raw === undefined) return { fileSizeLimit: DEFAULT_FILE_SIZE_LIMIT };
  const fileSizeLimit = parseConfigSize(raw);
  if (fileSizeLimit === null) {
    throw new PlatformError(
      `supabase/config.toml: [storage] file_size_limit = "${String(raw)}" is not a size.`,
      'Write it as a number with a unit, e.g. file_size_limit = "50MiB".',
    );
  }
  return { fileSizeLimit };
}
