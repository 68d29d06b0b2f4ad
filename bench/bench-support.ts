/** What every bench module needs from its surroundings and from its samples (waits: test/helpers/until.ts). */
import { SignJWT } from "jose";

/** A variable `npm run bench` exports (the stack's URL and keys); fails saying how to run the bench otherwise. */
export function requiredEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the bench through \`npm run bench\`, which starts a stack and exports it.`);
  return value;
}

/** A signed-in user's session token, as the auth service would issue it (HS256 with the stack's JWT secret, 2 hours). */
export function signedInToken(jwtSecret: string, userId: string): Promise<string> {
  return new SignJWT({ role: "authenticated", aud: "authenticated", app_metadata: {}, user_metadata: {} })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setSubject(userId)
    .setIssuedAt()
    .setExpirationTime("2h")
    .sign(new TextEncoder().encode(jwtSecret));
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

/** One row of the summary table `npm run bench` prints at the end and writes to bench/results.json. */
export interface BenchFigure {
  /** The bench module that measured it ("gateway", "logs", …). */
  bench: string;
  /** What was measured, with its load ("single-row GET, 8 in flight"). */
  metric: string;
  /** The size of the work, when the bench measures a curve ("1M rows", "32 in flight"). */
  scale?: string;
  /** Our figure. */
  value: number;
  /** "req/s", "ms", "actions/s"… */
  unit: string;
  /** Whether a larger value is better (throughput) or worse (latency, cost). */
  higherIsBetter: boolean;
  /** The baseline measured in the same run, when there is one. */
  baseline?: { name: string; value: number };
  /** The goal in words ("≥ 0.9× baseline", "p95 ≤ 20 ms") and whether it was met. */
  goal?: { text: string; met: boolean };
}

const figures: BenchFigure[] = [];

/**
 * Records a figure for the summary table (printed by scripts/bench.ts after every module ran).
 * Benches still print their detailed lines as they go; this is the one line per figure that the
 * table, docs/performance.md and bench/results.json carry.
 */
export function report(figure: BenchFigure): void {
  figures.push(figure);
}

/** Every figure reported so far, in the order they were reported. */
export function reportedFigures(): readonly BenchFigure[] {
  return figures;
}

/** Our figure divided by the baseline's (read it with higherIsBetter); null without a baseline. */
export function ratio(figure: BenchFigure): number | null {
  if (!figure.baseline || figure.baseline.value === 0) return null;
  return figure.value / figure.baseline.value;
}
