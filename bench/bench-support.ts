/** What every bench module needs from its surroundings and from its samples (waits: test/helpers/until.ts). */

/** A variable `npm run bench` exports (the stack's URL and keys); fails saying how to run the bench otherwise. */
export function requiredEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the bench through \`npm run bench\`, which starts a stack and exports it.`);
  return value;
}

/** The sample at `fraction` (0.95 for p95) of samples sorted ascending; 0 when there are none. */
export function percentile(sorted: readonly number[], fraction: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))];
}

/** A sorted copy of `samples`, for percentile. */
export function ascending(samples: readonly number[]): number[] {
  return [...samples].sort((a, b) => a - b);
}

/** The mark a bench prints beside a figure: ✓ goal met, ✗ missed, · no goal. */
export function verdict(ok: boolean | null): string {
  if (ok === null) return "·";
  return ok ? "✓" : "✗";
}
