/**
 * The `api` function keeps serving while its database connections are terminated under it
 * (pg_terminate_backend, as an administrator or a failover would): requests caught by the loss are
 * answered 503 DATABASE_UNAVAILABLE with Retry-After, or succeed, and none is answered by the
 * functions host's own WORKER_ERROR, which is what a worker killed by postgres.js 3.4.9's uncaught
 * `nextWrite` TypeError (porsager/postgres #1154, #1208), or by the rejections it leaves unhandled
 * when a connection is terminated, would give. Afterwards the same worker answers normally and no
 * admitted run is left running.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WorkflowBuilder } from "../../supabase/functions/_shared/workflows/state/state-builder.ts";
import { createWorkspace } from "./factories.ts";
import { apiKey, deployedWorkflow, eventually, execute, setPlan, sql } from "./execute-api.ts";

let workflowId: string;
let key: string;

beforeAll(async () => {
  const workspace = await createWorkspace("Connection loss");
  await setPlan(workspace.id, "enterprise", { sync_per_minute: 100_000 });
  workflowId = await deployedWorkflow(workspace.members.editor, workspace.id, "One block", new WorkflowBuilder()
    .block("api", "api_trigger", {}, { name: "API" })
    .block("done", "response", { body: { ok: true } }, { name: "Done" })
    .chain("api", "done").build());
  key = (await apiKey(workspace.members.editor)).key;
});

afterAll(async () => {
  await sql.end();
});

describe("terminated database connections", () => {
  it("leave the api worker serving", async () => {
    await eventually("a first run", () => execute(workflowId, key, {}), (answer) => answer.status === 200);
    let stop = false;
    let terminated = 0;
    const killer = (async () => {
      while (!stop) {
        const rows = await sql<{ pid: number }[]>`
          select pid from pg_stat_activity where application_name = 'orbita-edge-function' and pid <> pg_backend_pid()`;
        for (const { pid } of rows) await sql`select pg_terminate_backend(${pid})`;
        terminated += rows.length;
        await new Promise((resolve) => setTimeout(resolve, 30));
      }
    })();
    const statuses: Record<string, number> = {};
    const problems: string[] = [];
    const sender = async () => {
      for (let index = 0; index < 40; index++) {
        const answer = await execute(workflowId, key, {});
        statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
        const expected = answer.status === 200 || (answer.status === 503 && answer.body.code === "DATABASE_UNAVAILABLE" && answer.headers.get("retry-after") === "1");
        if (!expected) problems.push(`${answer.status} ${answer.text.slice(0, 200)}`);
      }
    };
    await Promise.all([sender(), sender(), sender(), sender()]);
    stop = true;
    await killer;
    expect(terminated).toBeGreaterThan(0);
    expect(problems).toEqual([]);
    expect(statuses["200"]).toBeGreaterThan(0);

    // The pool opens new connections for the ones it lost; a request may still meet a dead one first.
    await eventually("a run after the terminations", () => execute(workflowId, key, {}), (answer) => answer.status === 200, 10_000);
    // A run admitted just before its connection went is finished on a retried connection.
    await eventually("no run of the workflow to be left running", async () => {
      const [{ running }] = await sql<{ running: number }[]>`select count(*)::int as running from public.workflow_executions where workflow_id = ${workflowId} and status = 'running'`;
      return running;
    }, (running) => running === 0, 10_000);
  }, 60_000);
});
