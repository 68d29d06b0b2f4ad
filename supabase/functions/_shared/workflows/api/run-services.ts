/**
 * What the workflow service's endpoints run on: the SQL lifecycle calls, the instance's cache, the
 * file store and the time limit of a request's run. One object, built once per function instance,
 * so a test can hand an endpoint other settings without reaching into module state.
 */
import { readEnv } from "../../db/env.ts";
import { runCache, type RunCache } from "../runs/run-cache.ts";
import { callService, type ServiceCall } from "../runs/service-calls.ts";
import { storageFileStore, type RecordingFileStore, type RunFilesTarget } from "../runs/storage-files.ts";

/** The endpoints' dependencies (see the module comment). */
export interface RunServices {
  call: ServiceCall;
  cache: RunCache;
  files(target: RunFilesTarget): RecordingFileStore;
  /** The longest a run answered within its request may take (sync and streamed runs). */
  syncTimeoutMs: number;
}

/**
 * The default limit of a run answered within its request. Supabase stops a function's request at
 * its wall clock (150 s on the free plan, as ORBITA_FUNCTIONS_WALL_CLOCK_MS locally) with a 546;
 * the run stops 10 s before that, which leaves time to record it and answer 408.
 */
export const DEFAULT_SYNC_TIMEOUT_MS = 140_000;

/** WORKFLOW_SYNC_TIMEOUT_MS when set (a project on a plan with a longer wall clock), else the default. */
export function syncTimeoutFromEnv(): number {
  const configured = Number(readEnv("WORKFLOW_SYNC_TIMEOUT_MS"));
  return Number.isInteger(configured) && configured > 0 ? configured : DEFAULT_SYNC_TIMEOUT_MS;
}

let defaults: RunServices | undefined;

/** The function instance's services. */
export function defaultRunServices(): RunServices {
  defaults ??= { call: callService, cache: runCache, files: (target) => storageFileStore(target), syncTimeoutMs: syncTimeoutFromEnv() };
  return defaults;
}
