/**
 * Faults that must not disturb the shared test stack, on a supervised stack of its own
 * (test/helpers/own-stack.ts):
 *
 * - an async run whose worker is killed mid-run (the functions host, SIGKILL) comes back to the
 *   queue when its lease ends and is run again under the same execution id: completed, recorded
 *   once, charged once;
 * - a durable run killed after the second of its four API blocks has completed resumes from its
 *   checkpoints: each block's call to a local counter server happens exactly once over the run
 *   (docs/workflow-runs.md, "Durable async runs");
 * - a queued run whose checkpoint cannot be written (each try's connection terminated while it
 *   waits on a lock) lets go of the run, which goes back to the queue and completes, instead of
 *   ending failed;
 * - a sync run whose functions host is killed mid-run (a Wait keeps it running) leaves its
 *   Idempotency-Key held only for its short lease (run-lease.ts): a client retrying with the same
 *   key gets the recorded ending (WORKER_LOST) within that lease plus slack, without the sweeper
 *   being run ahead; one record, one charge (its base charge: it was admitted);
 * - the `api` function keeps serving while its database connections are terminated under it
 *   (pg_terminate_backend): requests caught by the loss answer 503 DATABASE_UNAVAILABLE with
 *   Retry-After, or succeed, and none gets the functions host's WORKER_ERROR, which is what a
 *   worker killed by postgres.js 3.4.9's uncaught `nextWrite` TypeError (porsager/postgres #1154,
 *   #1208), or by the rejections it leaves unhandled, would give.
 */
import { createClient } from "@supabase/supabase-js";
import postgres from "postgres";
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../platform/config/stack-config.ts";
import { OwnStack, ownStackSlot, STACK_BOOT_MS } from "../helpers/own-stack.ts";
import { until } from "../helpers/until.ts";
import { SYNC_LEASE_SECONDS } from "../../supabase/functions/_shared/workflows/runs/run-lease.ts";
import { WorkflowBuilder } from "../../supabase/functions/_shared/workflows/state/state-builder.ts";
import { runState, startCounterServer, type CounterServer } from "./durable-helpers.ts";

const config = loadConfig("test", ownStackSlot("asyncWorkerKill"));
/** How long the waits below allow by default. */
const WAIT_MS = 60_000;
const DEMO_KEY = "orb_local_only_demo_key_000000000000000000000000";
/** Short leases, so the test waits seconds, not the production two minutes, for a dead worker's run. */
const LEASE_SECONDS = 4;

describe("a worker killed mid-run", () => {
  let stack: OwnStack;
  let workflowId: string;
  let stepsId: string;
  let longWaitId: string;
  let counter: CounterServer;
  const sql = postgres(config.dbUrl, { max: 1, onnotice: () => {} });

  beforeAll(async () => {
    stack = await OwnStack.start(config, STACK_BOOT_MS);

    await sql`update platform.queue_workers set visibility_timeout = ${LEASE_SECONDS} where queue_name = 'workflow_runs'`;
    const builder = createClient(config.apiUrl, config.anonKey, { auth: { persistSession: false }, realtime: { transport: WebSocket as unknown as typeof globalThis.WebSocket } });
    const signIn = await builder.auth.signInWithPassword({ email: "builder@workflows.orbita.test", password: "Orbita#2026" });
    if (signIn.error) throw signIn.error;
    const [{ id: workspaceId }] = await sql<{ id: string }[]>`select workspace_id as id from public.workflows where id = 'f5000000-0000-4000-8000-000000000003'`;
    const state = new WorkflowBuilder()
      .block("api", "api_trigger", {}, { name: "API" })
      .block("pause", "wait", { amount: 6, unit: "seconds" }, { name: "Pause" })
      .block("done", "function", { code: "return 'finished';" }, { name: "Done" })
      .chain("api", "pause", "done").build();
    const created = await builder.from("workflows").insert({ workspace_id: workspaceId, name: "Slow", state }).select("id").single<{ id: string }>();
    if (created.error) throw created.error;
    workflowId = created.data.id;
    const deployed = await builder.rpc("deploy_workflow", { p_workflow_id: workflowId });
    if (deployed.error) throw deployed.error;
    await sql`insert into public.billing_account_overrides (billing_account_id, sync_per_minute, async_per_minute)
      select billing_account_id, 100000, 100000 from public.workspaces where id = ${workspaceId}`;

    // Four API blocks calling the counter; a Wait under the park threshold sits between the second
    // and the third, so the worker can be killed after the second block's checkpoint is committed.
    counter = await startCounterServer();
    const step = (id: string) => ({ url: `${counter.url}/hit/${id}` });
    const steps = new WorkflowBuilder()
      .block("api", "api_trigger", {}, { name: "API" })
      .block("s1", "api", step("s1"), { name: "Step 1" })
      .block("s2", "api", step("s2"), { name: "Step 2" })
      .block("pause", "wait", { amount: 5, unit: "seconds" }, { name: "Pause" })
      .block("s3", "api", step("s3"), { name: "Step 3" })
      .block("s4", "api", step("s4"), { name: "Step 4" })
      .chain("api", "s1", "s2", "pause", "s3", "s4").build();
    const createdSteps = await builder.from("workflows").insert({ workspace_id: workspaceId, name: "Durable steps", state: steps }).select("id").single<{ id: string }>();
    if (createdSteps.error) throw createdSteps.error;
    stepsId = createdSteps.data.id;
    const deployedSteps = await builder.rpc("deploy_workflow", { p_workflow_id: stepsId });
    if (deployedSteps.error) throw deployedSteps.error;

    // A sync run still in its Wait when the functions host is killed (the test stack's sync limit is 8 s).
    const longWait = new WorkflowBuilder()
      .block("api", "api_trigger", {}, { name: "API" })
      .block("pause", "wait", { amount: 60, unit: "seconds" }, { name: "Pause" })
      .block("done", "function", { code: "return 'finished';" }, { name: "Done" })
      .chain("api", "pause", "done").build();
    const createdLongWait = await builder.from("workflows").insert({ workspace_id: workspaceId, name: "Long wait", state: longWait }).select("id").single<{ id: string }>();
    if (createdLongWait.error) throw createdLongWait.error;
    longWaitId = createdLongWait.data.id;
    const deployedLongWait = await builder.rpc("deploy_workflow", { p_workflow_id: longWaitId });
    if (deployedLongWait.error) throw deployedLongWait.error;
  }, STACK_BOOT_MS + 60_000);

  afterAll(async () => {
    await sql.end();
    await counter?.close();
    await stack?.dispose();
  }, 60_000);

  it("runs again under the same execution id, recorded and charged once", async () => {
    const queued = await fetch(`${config.apiUrl}/api/workflows/${workflowId}/execute`, { method: "POST", headers: { "X-API-Key": DEMO_KEY, "X-Execution-Mode": "async", "content-type": "application/json" }, body: "{}" });
    expect(queued.status).toBe(202);
    const { executionId } = (await queued.json()) as { executionId: string };

    await until("the first attempt to be running", async () => {
      const [run] = await sql<{ status: string; attempt: number }[]>`select status::text, attempt from public.workflow_executions where id = ${executionId}`;
      return run.status === "running" && run.attempt === 1;
    }, WAIT_MS);
    const host = stack.service("functions");
    process.kill(host.pid as number, "SIGKILL");
    await until("the functions host to be restarted", () => stack.service("functions").pid !== host.pid && stack.service("functions").state === "running", WAIT_MS);

    await until("the run to end", async () => {
      const [run] = await sql<{ status: string }[]>`select status::text from public.workflow_executions where id = ${executionId}`;
      return run.status !== "running" && run.status !== "queued";
    }, 90_000);
    const runs = await sql<{ status: string; attempt: number; output: unknown; level: string }[]>`
      select status::text, attempt, output, level::text from public.workflow_executions where id = ${executionId}`;
    expect(runs).toEqual([{ status: "completed", attempt: 2, level: "info", output: { result: "finished", stdout: "" } }]);
    const [{ charges }] = await sql<{ charges: number }[]>`select count(*)::int as charges from public.usage_ledger where execution_id = ${executionId}`;
    expect(charges).toBe(1);
    const job = await fetch(`${config.apiUrl}/api/jobs/${executionId}`, { headers: { "X-API-Key": DEMO_KEY } });
    expect(await job.json()).toMatchObject({ status: "completed", metadata: { attempt: 2 } });
  }, 120_000);

  it("resumes a durable run from the last completed block: every block's side effect happens once", async () => {
    const queued = await fetch(`${config.apiUrl}/api/workflows/${stepsId}/execute`, { method: "POST", headers: { "X-API-Key": DEMO_KEY, "X-Execution-Mode": "async", "content-type": "application/json" }, body: "{}" });
    expect(queued.status).toBe(202);
    const { executionId } = (await queued.json()) as { executionId: string };

    await until("the second block's checkpoint", async () => (await runState(sql, executionId)).checkpoints.includes("s2"), WAIT_MS);
    const host = stack.service("functions");
    process.kill(host.pid as number, "SIGKILL");
    expect(await runState(sql, executionId)).toMatchObject({ status: "running", attempt: 1, checkpoints: ["api", "s1", "s2"] });
    expect(Object.fromEntries(counter.hits)).toEqual({ s1: 1, s2: 1 });
    await until("the functions host to be restarted", () => stack.service("functions").pid !== host.pid && stack.service("functions").state === "running", WAIT_MS);

    await until("the run to end", async () => !["running", "queued"].includes((await runState(sql, executionId)).status), 90_000);
    const [run] = await sql<{ status: string; attempt: number; output: unknown; trace_spans: { name: string; status: string }[] }[]>`
      select status::text, attempt, output, trace_spans from public.workflow_executions where id = ${executionId}`;
    expect(run).toMatchObject({ status: "completed", attempt: 2, output: { status: 200, data: { name: "s4", count: 1 } } });
    expect(Object.fromEntries(counter.hits)).toEqual({ s1: 1, s2: 1, s3: 1, s4: 1 });
    expect(run.trace_spans.map((span) => `${span.name} ${span.status}`)).toEqual(["API success", "Step 1 success", "Step 2 success", "Pause success", "Step 3 success", "Step 4 success"]);
    const [{ charges }] = await sql<{ charges: number }[]>`select count(*)::int as charges from public.usage_ledger where execution_id = ${executionId}`;
    expect(charges).toBe(1);
    // The history outlives the run, for re-runs from a block: both attempts' records, once each.
    expect((await runState(sql, executionId)).checkpoints).toEqual(["api", "s1", "s2", "pause", "s3", "s4"]);
  }, 150_000);

  it("sends a queued run whose checkpoint cannot be written back to the queue, and completes it", async () => {
    counter.hits.clear();
    const queued = await fetch(`${config.apiUrl}/api/workflows/${stepsId}/execute`, { method: "POST", headers: { "X-API-Key": DEMO_KEY, "X-Execution-Mode": "async", "content-type": "application/json" }, body: "{}" });
    expect(queued.status).toBe(202);
    const { executionId } = (await queued.json()) as { executionId: string };
    await until("the second block's checkpoint", async () => (await runState(sql, executionId)).checkpoints.includes("s2"), WAIT_MS);
    // The checkpoints table is locked, so the next checkpoint the worker writes (the Wait's) waits
    // on the lock, and each try's connection is terminated while it waits: every try loses its
    // connection, deterministically, and the attempt lets go of the run. The lock is released once
    // no try has come for two seconds, so an attempt that failed the run instead could record it.
    const admin = postgres(config.adminDbUrl, { max: 2, onnotice: () => {} });
    let terminated = 0;
    try {
      await admin.begin(async (locked) => {
        await locked`lock table workflows_private.run_checkpoints in exclusive mode`;
        let quietSince = Date.now();
        while (terminated === 0 ? Date.now() - quietSince < WAIT_MS : Date.now() - quietSince < 2_000) {
          const [{ count }] = await admin<{ count: number }[]>`
            select count(pg_terminate_backend(pid))::int as count from pg_stat_activity
            where application_name = 'orbita-edge-function' and wait_event_type = 'Lock' and query like '%record_workflow_checkpoint%'`;
          if (count > 0) quietSince = Date.now();
          terminated += count;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      });
    } finally {
      await admin.end();
    }
    expect(terminated).toBeGreaterThan(0);

    await until("the run to end", async () => !["running", "queued"].includes((await runState(sql, executionId)).status), 90_000);
    const [run] = await sql<{ status: string; attempt: number; output: unknown }[]>`select status::text, attempt, output from public.workflow_executions where id = ${executionId}`;
    expect(run).toMatchObject({ status: "completed", output: { status: 200, data: { name: "s4", count: 1 } } });
    expect(run.attempt).toBeGreaterThanOrEqual(2);
    // Steps 1 and 2 were checkpointed before the loss: the attempt that completes the run replays them.
    expect([counter.hits.get("s1"), counter.hits.get("s2"), counter.hits.get("s4")]).toEqual([1, 1, 1]);
    const [{ charges }] = await sql<{ charges: number }[]>`select count(*)::int as charges from public.usage_ledger where execution_id = ${executionId}`;
    expect(charges).toBe(1);
  }, 150_000);

  it("answers a retry of a sync run killed mid-run from its recorded ending within the short lease, without the sweeper", async () => {
    const key = `sync-kill-${Date.now()}`;
    const execute = () => fetch(`${config.apiUrl}/api/workflows/${longWaitId}/execute`, {
      method: "POST", headers: { "X-API-Key": DEMO_KEY, "Idempotency-Key": key, "content-type": "application/json" }, body: "{}", signal: AbortSignal.timeout(120_000),
    });
    const first = execute().then((response) => response.status, () => 0);

    let executionId = "";
    await until("the run to be admitted", async () => {
      const rows = await sql<{ id: string }[]>`select execution_id as id from workflows_private.idempotency_keys where workflow_id = ${longWaitId} and key = ${key}`;
      executionId = rows[0]?.id ?? "";
      return executionId !== "";
    }, WAIT_MS);
    // The run holds the short lease, not its time limit plus 60 s. (The test stack's sync limit,
    // 8 s, ends runs before the first renewal at a third of the lease; pgTAP covers renewals.)
    const [held] = await sql<{ status: string; left: number }[]>`
      select status::text, extract(epoch from lease_expires_at - clock_timestamp())::float8 as left from public.workflow_executions where id = ${executionId}`;
    expect(held.status).toBe("running");
    expect(held.left).toBeLessThanOrEqual(SYNC_LEASE_SECONDS);

    const host = stack.service("functions");
    process.kill(host.pid as number, "SIGKILL");
    const killedAt = Date.now();
    expect(await first).not.toBe(200);
    await until("the functions host to be restarted", () => stack.service("functions").pid !== host.pid && stack.service("functions").state === "running", WAIT_MS);

    // The client retries with the same key: 409 while the lease may still be renewed, a platform's
    // "try again" while the host restarts, then the run's ending. No sweeper is run ahead of time.
    const statuses: number[] = [];
    let final: { status: number; body: unknown; headers: Headers } | undefined;
    await until("the retry's final answer within the lease", async () => {
      const response = await execute().catch(() => null);
      statuses.push(response?.status ?? 0);
      if (!response) return false;
      const text = await response.text();
      if ((response.status === 409 && text.includes("IDEMPOTENCY_KEY_IN_USE")) || [502, 503, 504, 546].includes(response.status)) return false;
      final = { status: response.status, body: JSON.parse(text), headers: response.headers };
      return true;
    }, (SYNC_LEASE_SECONDS + 60) * 1000, 500);
    console.log(`sync run killed mid-run: the retry got its ending ${Date.now() - killedAt} ms after kill -9 (lease ${SYNC_LEASE_SECONDS} s); answers: ${statuses.join(",")}`);

    expect(final?.status).toBe(500);
    expect(final?.body).toMatchObject({ success: false, executionId, code: "EXECUTION_FAILED", errorCode: "WORKER_LOST" });
    expect(final?.headers.get("x-execution-id")).toBe(executionId);
    expect(final?.headers.get("idempotent-replayed")).toBe("true");
    const runs = await sql<{ id: string; status: string; error_code: string; charges: number }[]>`
      select e.id, e.status::text, e.error_code, (select count(*)::int from public.usage_ledger l where l.execution_id = e.id) as charges
      from public.workflow_executions e where e.workflow_id = ${longWaitId}`;
    expect(runs).toEqual([{ id: executionId, status: "failed", error_code: "WORKER_LOST", charges: 1 }]);
  }, 240_000);

  it("leaves the api worker serving while its database connections are terminated", async () => {
    // Each request is bounded, so a hung one is reported as a problem, not as the test's timeout.
    const execute = () => fetch(`${config.apiUrl}/api/workflows/f5000000-0000-4000-8000-000000000003/execute`, { method: "POST", headers: { "X-API-Key": DEMO_KEY, "content-type": "application/json" }, body: '{"name": "Ana"}', signal: AbortSignal.timeout(WAIT_MS) });
    await until("a first run", async () => (await execute()).status === 200, WAIT_MS);
    // The storm ends on what it is for, not on a request count that a loaded machine may take
    // minutes to get through: the killer has terminated the function's connections many times and
    // enough requests were answered under it (a cap keeps a fast machine from running forever).
    const ENOUGH_TERMINATIONS = 20;
    const ENOUGH_ANSWERS = 40;
    let stop = false;
    let terminated = 0;
    let answered = 0;
    const problems: string[] = [];
    const stormIsOver = () => stop || (terminated >= ENOUGH_TERMINATIONS && answered >= ENOUGH_ANSWERS);
    const killer = (async () => {
      while (!stormIsOver()) {
        const rows = await sql<{ pid: number }[]>`select pid from pg_stat_activity where application_name = 'orbita-edge-function' and pid <> pg_backend_pid()`;
        for (const { pid } of rows) await sql`select pg_terminate_backend(${pid})`;
        terminated += rows.length;
        await new Promise((resolve) => setTimeout(resolve, 30));
      }
      // Handled here, at once: a failing killer ends the storm and is reported as a problem
      // instead of a rejection nobody is awaiting yet.
    })().catch((error: unknown) => {
      stop = true;
      problems.push(`the killer failed: ${String(error)}`);
    });
    const sender = async () => {
      for (let index = 0; index < 100 && !stormIsOver(); index++) {
        try {
          const response = await execute();
          const text = await response.text();
          if (response.status !== 200 && !(response.status === 503 && JSON.parse(text).code === "DATABASE_UNAVAILABLE" && response.headers.get("retry-after") === "1")) problems.push(`${response.status} ${text.slice(0, 200)}`);
        } catch (error) {
          problems.push(`no answer: ${String(error)}`);
        }
        answered++;
      }
    };
    try {
      await Promise.all([sender(), sender(), sender(), sender()]);
    } finally {
      // Whatever happened, the killer is stopped and awaited here: left running, its next query
      // after afterAll's sql.end() rejected with CONNECTION_ENDED, unhandled.
      stop = true;
      await killer;
    }
    expect(terminated).toBeGreaterThan(0);
    expect(problems).toEqual([]);
    // On a loaded machine every run in the storm may meet a terminated connection (so none counts
    // as served); what matters is that the same worker serves again once it ends, without a restart.
    await until("a run after the terminations", async () => (await execute()).status === 200, WAIT_MS);
    // A run whose finish lost its connection on every try is the sweeper's: nothing stays running.
    await sql`select workflows_private.sweep_workflow_runs(now() + interval '1 hour')`;
    const [{ running }] = await sql<{ running: number }[]>`select count(*)::int as running from public.workflow_executions where status = 'running'`;
    expect(running).toBe(0);
    // A run the loss stopped is recorded as what its caller was answered (or as the sweeper ended
    // it), never as an internal error.
    const endings = await sql<{ code: string }[]>`
      select distinct error_code as code from public.workflow_executions
      where workflow_id = 'f5000000-0000-4000-8000-000000000003' and status = 'failed'`;
    expect(endings.map(({ code }) => code).filter((code) => !["DATABASE_UNAVAILABLE", "WORKER_LOST"].includes(code))).toEqual([]);
  }, 240_000);
});
