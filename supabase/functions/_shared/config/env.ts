declare const Deno: { env: { get(name: string): string | undefined } } | undefined;

/** Reads an environment variable under Deno (edge runtime) and under Node (vitest) alike. */
export function readEnv(name: string): string | undefined {
  if (typeof Deno !== "undefined") return Deno.env.get(name);
  return (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env[name];
}

/** Reads an environment variable that must be set, failing with its name when it is not. */
export function requireEnv(name: string): string {
  const value = readEnv(name);
  if (!value) throw new Error(`Missing environment variable ${name}`);
  return value;
}
