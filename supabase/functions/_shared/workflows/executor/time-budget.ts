/**
 * How long a run may take, derived from the functions host's wall clock so that a run always ends
 * (as a timed-out run, answered 408) before the host would stop the function mid-request (546
 * WORKER_LIMIT, which also retires the worker). Settings (docs/workflow-limits.md):
 *
 *  - `FUNCTIONS_WALL_CLOCK_MS`: the host's wall clock per request. Hosted Supabase gives 150 s on
 *    the free plan (the default here) and 400 s on paid plans; the local functions host passes its
 *    own (`ORBITA_FUNCTIONS_WALL_CLOCK_MS`).
 *  - `WORKFLOW_SYNC_TIMEOUT_MS`: a synchronous run's limit; by default the wall clock minus a
 *    margin (RUN_TIME_MARGIN_MS) that leaves time to record the run and write the answer, and never
 *    more than that.
 *  - `WORKFLOW_ASYNC_TIMEOUT_MS`: the same for a run the async worker takes, which is one function
 *    request too, so the same ceiling applies until runs can park and resume.
 *
 * A value that is not a positive whole number is ignored with a warning, rather than taking down
 * the function that serves other APIs beside the workflows.
 */
import { readEnv } from "../../config/env.ts";
import { workflowLog } from "../workflow-errors.ts";

/** Hosted Supabase's wall clock on the free plan, when FUNCTIONS_WALL_CLOCK_MS is not set. */
export const DEFAULT_WALL_CLOCK_MS = 150_000;

/** Time kept back from the wall clock to record a run and answer after its limit. */
export const RUN_TIME_MARGIN_MS = 10_000;

/** The shortest limit a run gets, whatever the settings. */
const MIN_RUN_TIMEOUT_MS = 1_000;

/** The time budgets, in ms. */
export interface RunTimeBudgets {
  wallClockMs: number;
  /** The most any run may take here: the wall clock minus the margin. */
  ceilingMs: number;
  syncMs: number;
  asyncMs: number;
}

/** A setting in whole milliseconds, or undefined when unset or not a positive whole number (with a warning). */
export function setting(read: (name: string) => string | undefined, name: string): number | undefined {
  const raw = read(name);
  if (raw === undefined || raw.trim() === "") return undefined;
  const value = Number(raw);
  if (Number.isInteger(value) && value > 0) return value;
  workflowLog.warn("ignored_setting", { setting: name, value: raw, reason: "not a positive whole number of milliseconds" });
  return undefined;
}

function limited(read: (name: string) => string | undefined, name: string, ceiling: number): number {
  const asked = setting(read, name);
  if (asked === undefined) return ceiling;
  if (asked > ceiling) workflowLog.warn("capped_setting", { setting: name, value: asked, cappedTo: ceiling, reason: "longer than the wall clock minus the margin" });
  return Math.min(asked, ceiling);
}

/** The budgets from the environment (`read` is for tests). */
export function runTimeBudgets(read: (name: string) => string | undefined = readEnv): RunTimeBudgets {
  const wallClockMs = setting(read, "FUNCTIONS_WALL_CLOCK_MS") ?? DEFAULT_WALL_CLOCK_MS;
  const ceilingMs = Math.max(MIN_RUN_TIMEOUT_MS, wallClockMs - RUN_TIME_MARGIN_MS);
  return { wallClockMs, ceilingMs, syncMs: limited(read, "WORKFLOW_SYNC_TIMEOUT_MS", ceilingMs), asyncMs: limited(read, "WORKFLOW_ASYNC_TIMEOUT_MS", ceilingMs) };
}

let budgets: RunTimeBudgets | null = null;

/** A synchronous run's limit in this function instance (read once). */
export function syncRunTimeoutMs(): number {
  budgets ??= runTimeBudgets();
  return budgets.syncMs;
}

/** A run's limit in the async worker, in this function instance (read once). */
export function asyncRunTimeoutMs(): number {
  budgets ??= runTimeBudgets();
  return budgets.asyncMs;
}
