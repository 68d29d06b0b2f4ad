/**
 * Cancelling a running run at once rather than at its next heartbeat (10 to 40 s away). The database
 * signals a cancellation with NOTIFY workflow_run_cancel, the execution id as payload, when the
 * cancelling transaction commits (workflows_private.cancel_run). Each functions instance that runs
 * runs LISTENs on the channel once, on first use, over one session connection of its project pool
 * (postgres.js keeps it apart from the pool's query connections and LISTENs again after a
 * reconnect), and calls the watchers of that execution id: the run's lease (run-lease.ts) aborts the
 * run, which stops a Function spinning in the sandbox.
 *
 * LISTEN needs a session connection: SUPABASE_DB_URL direct or through the session pooler, never
 * the transaction pooler (port 6543), where a notification would reach whichever client held the
 * server connection. Without one (no SUPABASE_DB_URL, or listening failed), nothing is heard and the
 * heartbeat's `cancelRequested` stops the run, as before; docs/workflow-runs.md, "Cancelling runs".
 */
import { projectDatabase } from "../../db/direct-rpc.ts";
import { workflowLog } from "../workflow-errors.ts";

/** The channel workflows_private.cancel_run notifies. */
export const CANCEL_CHANNEL = "workflow_run_cancel";

/** Where a running run's instance hears that it was cancelled. */
export interface CancelSignals {
  /** Calls `cancel` when a cancellation of `executionId` is signalled, until the returned function is called. */
  watch(executionId: string, cancel: () => void): () => void;
}

/** Subscribes `onPayload` to `channel` (postgres.js's `sql.listen`); settles once listening. */
export type Listen = (channel: string, onPayload: (payload: string) => void) => Promise<unknown>;

/**
 * Signals heard through `listen` (null: none, the heartbeat alone stops runs). Listening starts with
 * the first watch; a failed start is logged and tried again on the next watch.
 */
export function cancelSignals(listen: Listen | null, log: (event: string, fields: Record<string, unknown>) => void): CancelSignals {
  const watchers = new Map<string, Set<() => void>>();
  let listening: Promise<unknown> | null = null;
  const hear = (executionId: string) => {
    for (const cancel of [...(watchers.get(executionId) ?? [])]) cancel();
  };
  return {
    watch(executionId, cancel) {
      if (listen !== null && listening === null) {
        listening = listen(CANCEL_CHANNEL, hear).catch((error: unknown) => {
          log("cancel_listen_failed", { error });
          listening = null;
        });
      }
      const watching = watchers.get(executionId) ?? new Set<() => void>();
      watchers.set(executionId, watching.add(cancel));
      return () => {
        watching.delete(cancel);
        if (watching.size === 0 && watchers.get(executionId) === watching) watchers.delete(executionId);
      };
    },
  };
}

let instanceSignals: CancelSignals | undefined;

/** The function instance's signals, heard on its project pool (none without SUPABASE_DB_URL). */
export function instanceCancelSignals(): CancelSignals {
  if (instanceSignals) return instanceSignals;
  const database = projectDatabase();
  instanceSignals = cancelSignals(database === null ? null : (channel, onPayload) => database.sql.listen(channel, onPayload),
    (event, fields) => workflowLog.warn(event, fields));
  return instanceSignals;
}
