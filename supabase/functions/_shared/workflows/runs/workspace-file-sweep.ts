/**
 * The sweep of a deleted workspace's run files (issue 29, finding 6). Deleting a workspace queues
 * `{workspaceId}` on the pgmq queue `workspace_file_sweeps` in the deleting transaction
 * (migration …032300_workflows-workspace-deletion.sql); this drains it. Files are removed through
 * the Storage API, never by deleting storage.objects rows, because Storage keeps the bytes
 * elsewhere (on disk locally, S3 hosted) and only its own delete removes both. A message is
 * deleted only once its workspace has no file left, so a sweep cut short comes back after its
 * visibility timeout and carries on: removing is idempotent.
 *
 * The same queue carries the files of runs that retention removed (`{workspaceId, executionIds}`,
 * queued by workflows_private.expire_workflow_history; docs/retention.md): those sweeps list only
 * the named runs' files, and only once the runs are tombstoned, so a live run's files never go.
 */
import { z } from "zod";
import type { ServiceRpc } from "../../db/service-rpc.ts";

/** The queue this sweeper drains. */
export const FILE_SWEEP_QUEUE = "workspace_file_sweeps";

/** What the queue poller (or its pg_cron job) POSTs. */
export const fileSweepRequestSchema = z.object({
  queue_name: z.literal(FILE_SWEEP_QUEUE),
  batch_size: z.number().int().min(1).max(100),
  visibility_timeout: z.number().int().min(1).max(43_200),
});

/** Removes objects of the `workflow-files` bucket by name, through the Storage API. */
export type RemoveFiles = (names: string[]) => Promise<void>;

/** What a drain did. */
export interface FileSweepSummary {
  /** Sweeps finished (their message deleted). */
  swept: number;
  /** Files removed across them. */
  removed: number;
  /** Sweeps that failed and will come back after their visibility timeout. */
  failed: number;
}

const claimed = z.array(z.object({ messageId: z.number().int(), workspaceId: z.string().uuid(), executionIds: z.array(z.string().uuid()).optional() }));

/** The most pages of 1,000 names one sweep removes before it yields to the next invocation. */
const MAX_PAGES = 100;

/**
 * Claims up to `batchSize` sweeps and removes every file left under each deleted workspace (or of
 * each batch of expired runs), page by page; a failing sweep is logged and left for its message to come back.
 */
export async function drainFileSweeps(
  { rpc, remove, log }: { rpc: ServiceRpc; remove: RemoveFiles; log: (event: string, fields: Record<string, unknown>) => void },
  { batchSize, visibilitySeconds }: { batchSize: number; visibilitySeconds: number },
): Promise<FileSweepSummary> {
  const summary: FileSweepSummary = { swept: 0, removed: 0, failed: 0 };
  const sweeps = claimed.parse(await rpc("claim_workspace_file_sweeps", { p_batch_size: batchSize, p_visibility_seconds: visibilitySeconds }));
  for (const sweep of sweeps) {
    try {
      let finished = false;
      for (let page = 0; page < MAX_PAGES; page++) {
        const left = sweep.executionIds
          ? await rpc("expired_run_file_names", { p_workspace_id: sweep.workspaceId, p_execution_ids: sweep.executionIds, p_limit: 1000 })
          : await rpc("deleted_workspace_file_names", { p_workspace_id: sweep.workspaceId, p_limit: 1000 });
        if (left.length === 0) {
          finished = true;
          break;
        }
        await remove(left);
        summary.removed += left.length;
      }
      // Past MAX_PAGES the message stays and comes back, so one huge workspace cannot hold the sweeper.
      if (finished) {
        await rpc("finish_workspace_file_sweep", { p_message_id: sweep.messageId });
        summary.swept++;
      }
    } catch (error) {
      summary.failed++;
      log("workspace_file_sweep_failed", { workspaceId: sweep.workspaceId, error: error instanceof Error ? error.message : String(error) });
    }
  }
  return summary;
}
