/**
 * What the workflow service's endpoints run on: the SQL lifecycle calls, the instance's cache, the
 * file store and the time limit of a request's run. One object, built once per function instance,
 * so a test can hand an endpoint other settings without reaching into module state.
 */
import { syncRunTimeoutMs } from "../executor/time-budget.ts";
import { runCache, type RunCache } from "../runs/run-cache.ts";
import { instanceCancelSignals, type CancelSignals } from "../runs/cancel-signals.ts";
import { callService, type ServiceCall } from "../../db/service-calls.ts";
import { storageFileStore, type RecordingFileStore, type RunFilesTarget } from "../runs/storage-files.ts";

/** The endpoints' dependencies (see the module comment). */
export interface RunServices {
  call: ServiceCall;
  cache: RunCache;
  files(target: RunFilesTarget): RecordingFileStore;
  /** The longest a run answered within its request may take (sync and streamed runs). */
  syncTimeoutMs: number;
  /** Where a run in flight hears at once that it was cancelled (cancel-signals.ts). */
  cancelSignals: CancelSignals;
}

let defaults: RunServices | undefined;

/** The function instance's services. */
export function defaultRunServices(): RunServices {
  defaults ??= { call: callService, cache: runCache, files: (target) => storageFileStore(target), syncTimeoutMs: syncRunTimeoutMs(), cancelSignals: instanceCancelSignals() };
  return defaults;
}
