import { existsSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { parse } from "smol-toml";
import { z } from "zod";
import type { FunctionSettings } from "./host-config.ts";

/**
 * `[functions.<slug>]` tables of a config.toml, as the CLI reads them: `verify_jwt` and `enabled`
 * default to true, `entrypoint` is relative to the file's folder. Test fixtures may also set
 * `wall_clock_limit_ms` (an Orbita-only key, so only their own config file accepts it).
 */
const baseSettings = z.object({
  enabled: z.boolean().optional(),
  verify_jwt: z.boolean().optional(),
  entrypoint: z.string().optional(),
  import_map: z.string().optional(),
  static_files: z.array(z.string()).optional(),
});

const fixtureSettings = baseSettings.extend({ wall_clock_limit_ms: z.number().int().positive().optional() });

export function readFunctionSettings(file: string, options: { fixtures?: boolean } = {}): Record<string, FunctionSettings> {
  if (!existsSync(file)) return {};
  const document = parse(readFileSync(file, "utf8")) as { functions?: Record<string, unknown> };
  const schema = options.fixtures ? fixtureSettings.strict() : baseSettings;
  const settings: Record<string, FunctionSettings> = {};
  for (const [slug, raw] of Object.entries(document.functions ?? {})) {
    const parsed = schema.safeParse(raw);
    if (!parsed.success) throw new Error(`${file}: [functions.${slug}] ${parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ")}`);
    const value = parsed.data as z.infer<typeof fixtureSettings>;
    settings[slug] = {
      verifyJwt: value.verify_jwt ?? true,
      enabled: value.enabled ?? true,
      ...(value.entrypoint ? { entrypoint: resolve(dirname(file), value.entrypoint) } : {}),
      ...(value.wall_clock_limit_ms ? { wallClockMs: value.wall_clock_limit_ms } : {}),
    };
  }
  return settings;
}
