import { describe, expect, it } from "vitest";
import type { RpcArgs, RpcName, RpcResult } from "../../db/rpc.ts";
import type { ServiceRpc } from "../../db/service-rpc.ts";
import { drainFileSweeps } from "./workspace-file-sweep.ts";

const WORKSPACE = "00000000-0000-4000-8000-000000000001";
const OTHER = "00000000-0000-4000-8000-000000000002";

/** A ServiceRpc answering the functions `answers` has, each with its typed arguments; any other call fails. */
function answering(answers: { [Fn in RpcName]?: (args: RpcArgs<Fn>) => RpcResult<Fn> }): ServiceRpc {
  return async (fn, args) => {
    const answer = answers[fn];
    if (!answer) throw new Error(`unexpected ${fn}`);
    return answer(args);
  };
}

/** A queue and a bucket in memory, answering the sweeper's three SQL functions as the migration does. */
function fakes(files: string[], sweeps: { messageId: number; workspaceId: string; executionIds?: string[] }[]) {
  const stored = new Set(files);
  const finished: unknown[] = [];
  const rpc = answering({
    claim_workspace_file_sweeps: () => sweeps,
    deleted_workspace_file_names: (args) => [...stored].filter((name) => name.startsWith(`${args.p_workspace_id}/`)).sort().slice(0, Number(args.p_limit)),
    expired_run_file_names: (args) => [...stored]
      .filter((name) => name.startsWith(`${args.p_workspace_id}/`) && (args.p_execution_ids as string[]).includes(name.split("/")[2]))
      .sort().slice(0, Number(args.p_limit)),
    finish_workspace_file_sweep: (args) => finished.push(args.p_message_id) > 0,
  });
  return { stored, finished, rpc };
}

describe("drainFileSweeps", () => {
  it("removes every file of each deleted workspace, page by page, then finishes its sweep", async () => {
    const files = [...Array.from({ length: 2_500 }, (_, index) => `${WORKSPACE}/wf/run/${index}.txt`), `${OTHER}/wf/run/kept.txt`];
    const { stored, finished, rpc } = fakes(files, [{ messageId: 7, workspaceId: WORKSPACE }]);
    const pages: number[] = [];
    const summary = await drainFileSweeps({
      rpc,
      remove: async (names) => {
        pages.push(names.length);
        for (const name of names) stored.delete(name);
      },
      log: () => {},
    }, { batchSize: 10, visibilitySeconds: 60 });
    expect(summary).toEqual({ swept: 1, removed: 2_500, failed: 0 });
    expect(pages).toEqual([1_000, 1_000, 500]);
    expect([...stored]).toEqual([`${OTHER}/wf/run/kept.txt`]);
    expect(finished).toEqual([7]);
  });

  it("removes only the named runs' files for a sweep of expired runs, then finishes it", async () => {
    const expired = "00000000-0000-4000-8000-0000000000e1";
    const live = "00000000-0000-4000-8000-0000000000e2";
    const { stored, finished, rpc } = fakes([`${WORKSPACE}/wf/${expired}/a.txt`, `${WORKSPACE}/wf/${expired}/b.txt`, `${WORKSPACE}/wf/${live}/c.txt`],
      [{ messageId: 3, workspaceId: WORKSPACE, executionIds: [expired] }]);
    const summary = await drainFileSweeps({
      rpc,
      remove: async (names) => {
        for (const name of names) stored.delete(name);
      },
      log: () => {},
    }, { batchSize: 10, visibilitySeconds: 60 });
    expect(summary).toEqual({ swept: 1, removed: 2, failed: 0 });
    expect([...stored]).toEqual([`${WORKSPACE}/wf/${live}/c.txt`]);
    expect(finished).toEqual([3]);
  });

  it("leaves a sweep whose removal fails queued, to come back, and goes on with the next", async () => {
    const { stored, finished, rpc } = fakes([`${WORKSPACE}/a.txt`, `${OTHER}/b.txt`], [
      { messageId: 1, workspaceId: WORKSPACE },
      { messageId: 2, workspaceId: OTHER },
    ]);
    const logged: string[] = [];
    const summary = await drainFileSweeps({
      rpc,
      remove: async (names) => {
        if (names.some((name) => name.startsWith(WORKSPACE))) throw new Error("storage unavailable");
        for (const name of names) stored.delete(name);
      },
      log: (event) => logged.push(event),
    }, { batchSize: 10, visibilitySeconds: 60 });
    expect(summary).toEqual({ swept: 1, removed: 1, failed: 1 });
    expect(finished).toEqual([2]);
    expect(logged).toEqual(["workspace_file_sweep_failed"]);
  });
});
