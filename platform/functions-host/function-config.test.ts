import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readFunctionSettings } from "./function-config.ts";

function configFile(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), "orbita-fn-config-"));
  const file = join(dir, "config.toml");
  writeFileSync(file, text);
  return file;
}

describe("[functions.<slug>] settings", () => {
  it("defaults verify_jwt and enabled to true and resolves entrypoints against the file's folder", () => {
    const file = configFile(`
[functions.open]
verify_jwt = false

[functions.listed]

[functions.custom]
entrypoint = "./functions/custom/main.ts"
enabled = false
`);
    expect(readFunctionSettings(file)).toEqual({
      open: { verifyJwt: false, enabled: true },
      listed: { verifyJwt: true, enabled: true },
      custom: { verifyJwt: true, enabled: false, entrypoint: join(file, "..", "functions", "custom", "main.ts") },
    });
  });

  it("reads wall_clock_limit_ms only from the test fixtures' file", () => {
    const file = configFile(`[functions.slow]\nwall_clock_limit_ms = 1500\n`);
    expect(readFunctionSettings(file, { fixtures: true })).toEqual({ slow: { verifyJwt: true, enabled: true, wallClockMs: 1500 } });
    expect(readFunctionSettings(file)).toEqual({ slow: { verifyJwt: true, enabled: true } });
  });

  it("names the slug and key of an invalid setting", () => {
    const file = configFile(`[functions.bad]\nverify_jwt = "no"\n`);
    expect(() => readFunctionSettings(file)).toThrow(/\[functions\.bad\] verify_jwt/);
  });

  it("returns nothing for a missing file", () => {
    expect(readFunctionSettings(join(tmpdir(), "does-not-exist", "config.toml"))).toEqual({});
  });
});
