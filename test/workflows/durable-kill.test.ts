/**
 * A durable async run whose worker is killed mid-run, on a supervised stack of its own (slot 20+N,
 * which no other suite uses): the functions host is SIGKILLed after the run's second of four API
 * blocks has completed (its checkpoint committed) and while the Wait after it is in flight. The
 * next attempt resumes from the checkpoints: each block's call to a local counter server happens
 * exactly once over the whole run, and the run is recorded and charged once.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { createClient } from "@supabase/supabase-js";
import postgres from "postgres";
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig, PROJECT_ROOT } from "../../platform/config.ts";
import { readState, resetStack } from "../../platform/stack.ts";
import { WorkflowBuilder } from "../../supabase/functions/_shared/workflows/state/state-builder.ts";
import { runState, startCounterServer, type CounterServer } from "./durable-helpers.ts";

const config = loadConfig("test", 20 + Number(process.env.ORBITA_TEST_SLOT ?? 0));
const DEMO_KEY = "orb_local_only_demo_key_000000000000000000000000";
/** Short leases, so the test waits seconds, not the production two minutes, for a dead worker's run. */
const LEASE_SECONDS = 4;

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function functionsHost() {
  const found = readState(config)?.services.find((service) => service.name === "functions");
  if (!found) throw new Error("the functions host is not in the stack's state");
  return found;
}

describe("a durable run whose worker is killed mid-run", () => {
  let supervisor: ChildProcess;
  let output = "";
  let workflowId: string;
  let counter: CounterServer;
  const sql = postgres(config.dbUrl, { max: 1, onnotice: () => {} });

  beforeAll(async () => {
    supervisor = spawn(
      process.execPath,
      ["--import", join(PROJECT_ROOT, "node_modules", "tsx", "dist", "loader.mjs"), join(PROJECT_ROOT, "test", "helpers", "supervised-stack.ts"), String(config.slot)],
      { cwd: PROJECT_ROOT, stdio: ["ignore", "pipe", "pipe"] },
    );
    supervisor.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    supervisor.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    await until("the supervised stack to start", () => {
      if (supervisor.exitCode !== null) throw new Error(`the supervised stack exited while starting:\n${output}`);
      return output.includes("READY");
    }, 150_000);
    counter = await startCounterServer();

    await sql`update platform.queue_workers set visibility_timeout = ${LEASE_SECONDS} where queue_name = 'workflow_runs'`;
    const builder = createClient(config.apiUrl, config.anonKey, { auth: { persistSession: false }, realtime: { transport: WebSocket as unknown as typeof globalThis.WebSocket } });
    const signIn = await builder.auth.signInWithPassword({ email: "builder@workflows.orbita.test", password: "Orbita#2026" });
    if (signIn.error) throw signIn.error;
    const [{ id: workspaceId }] = await sql<{ id: string }[]>`select workspace_id as id from public.workflows where id = 'f5000000-0000-4000-8000-000000000003'`;
    const step = (id: string) => ({ url: `${counter.url}/hit/${id}` });
    // A Wait under the park threshold sits between the second and third blocks: the worker is
    // killed while it is in flight, after the second block's checkpoint is committed.
    const state = new WorkflowBuilder()
      .block("api", "api_trigger", {}, { name: "API" })
      .block("s1", "api", step("s1"), { name: "Step 1" })
      .block("s2", "api", step("s2"), { name: "Step 2" })
      .block("pause", "wait", { amount: 5, unit: "seconds" }, { name: "Pause" })
      .block("s3", "api", step("s3"), { name: "Step 3" })
      .block("s4", "api", step("s4"), { name: "Step 4" })
      .chain("api", "s1", "s2", "pause", "s3", "s4").build();
    const created = await builder.from("workflows").insert({ workspace_id: workspaceId, name: "Durable steps", state }).select("id").single<{ id: string }>();
    if (created.error) throw created.error;
    workflowId = created.data.id;
    const deployed = await builder.rpc("deploy_workflow", { p_workflow_id: workflowId });
    if (deployed.error) throw deployed.error;
    await sql`insert into public.billing_account_overrides (billing_account_id, sync_per_minute, async_per_minute)
      select billing_account_id, 100000, 100000 from public.workspaces where id = ${workspaceId}
      on conflict (billing_account_id) do update set sync_per_minute = excluded.sync_per_minute, async_per_minute = excluded.async_per_minute`;
  }, 180_000);

  afterAll(async () => {
    await sql.end();
    await counter?.close();
    if (supervisor && supervisor.exitCode === null) {
      supervisor.kill("SIGTERM");
      await until("the supervised stack to stop", () => supervisor.exitCode !== null, 30_000).catch(() => {});
    }
    await resetStack(config);
  }, 60_000);

  it("resumes from the last completed block: every block's side effect happens once", async () => {
    const queued = await fetch(`${config.apiUrl}/api/workflows/${workflowId}/execute`, { method: "POST", headers: { "X-API-Key": DEMO_KEY, "X-Execution-Mode": "async", "content-type": "application/json" }, body: "{}" });
    expect(queued.status).toBe(202);
    const { executionId } = (await queued.json()) as { executionId: string };

    await until("the second block's checkpoint", async () => (await runState(sql, executionId)).checkpoints.includes("s2"));
    const host = functionsHost();
    process.kill(host.pid as number, "SIGKILL");
    expect(await runState(sql, executionId)).toMatchObject({ status: "running", attempt: 1, checkpoints: ["api", "s1", "s2"] });
    expect(Object.fromEntries(counter.hits)).toEqual({ s1: 1, s2: 1 });
    await until("the functions host to be restarted", () => functionsHost().pid !== host.pid && functionsHost().state === "running");

    await until("the run to end", async () => !["running", "queued"].includes((await runState(sql, executionId)).status), 90_000);
    const [run] = await sql<{ status: string; attempt: number; output: unknown; trace_spans: { name: string; status: string }[] }[]>`
      select status::text, attempt, output, trace_spans from public.workflow_executions where id = ${executionId}`;
    expect(run).toMatchObject({ status: "completed", attempt: 2, output: { status: 200, data: { name: "s4", count: 1 } } });
    expect(Object.fromEntries(counter.hits)).toEqual({ s1: 1, s2: 1, s3: 1, s4: 1 });
    expect(run.trace_spans.map((span) => `${span.name} ${span.status}`)).toEqual(["API success", "Step 1 success", "Step 2 success", "Pause success", "Step 3 success", "Step 4 success"]);
    const [{ charges }] = await sql<{ charges: number }[]>`select count(*)::int as charges from public.usage_ledger where execution_id = ${executionId}`;
    expect(charges).toBe(1);
    expect((await runState(sql, executionId)).checkpoints).toEqual([]);
  }, 150_000);
});
