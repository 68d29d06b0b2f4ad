/**
 * Schedules on the running stack with a controllable clock: the ticker
 * (workflows_private.fire_due_schedules, which pg_cron calls every minute with now()) is called
 * with the time the test chooses, and the queued runs are run by the real workflow-worker. Slots
 * lie years ahead, so the real ticker never fires the suite's schedules. Due and not due, time
 * zones read through the data API, a daylight-saving change, two tickers at once, overlap,
 * misfire, pausing after failures, redeploys and refused expressions, and a backfill through the
 * data API (docs/triggers.md). Each overlap policy and jitter are proven in pgTAP
 * (33-workflows-triggers-schedule-overlap.test.sql).
 */
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WorkflowBuilder } from "../../supabase/functions/_shared/workflows/state/state-builder.ts";
import type { WorkflowStateInput } from "../../supabase/functions/_shared/workflows/state/state-schema.ts";
import { createTestUser } from "../helpers/clients.ts";
import { env } from "../helpers/env.ts";
import { createWorkflow, createWorkspace, type TestWorkspace } from "./factories.ts";
import { deployedWorkflow, eventually, record, setPlan, sql } from "./execute-api.ts";

/** One occurrence the ticker handled. */
interface Fired {
  scheduleId: string;
  workflowId: string;
  blockId: string;
  scheduledFor: string;
  outcome: "started" | "skipped" | "buffered";
  executionId?: string;
  reason?: string;
}

/** One occurrence as the data API shows it. */
interface Occurrence {
  scheduled_for: string;
  outcome: "started" | "skipped" | "buffered";
  source: "ticker" | "backfill";
  execution_id: string | null;
  jitter_seconds: number | null;
}

/** A schedule row as the data API shows it. */
interface Schedule {
  id: string;
  cron_expression: string;
  timezone: string;
  status: "active" | "paused";
  paused_reason: string | null;
  next_run_at: string | null;
  last_run_at: string | null;
  consecutive_failures: number;
}

let workspace: TestWorkspace;

/** Ticks the ticker at `now` and returns what it fired for `workflowId`. */
async function tick(workflowId: string, now: string, connection = sql): Promise<Fired[]> {
  const [{ fired }] = await connection<{ fired: Fired[] }[]>`select workflows_private.fire_due_schedules(${now}::timestamptz) as fired`;
  return fired.filter((entry) => entry.workflowId === workflowId);
}

/** The workflow's schedule, read by a viewer through the data API. */
async function schedule(workflowId: string): Promise<Schedule> {
  const { data, error } = await workspace.members.viewer.client.from("workflow_schedules").select("*").eq("workflow_id", workflowId).single<Schedule>();
  if (error) throw error;
  return data;
}

/** Sets a schedule's next run (as if it had been running until then). */
async function nextRunAt(workflowId: string, at: string): Promise<void> {
  await sql`update public.workflow_schedules set next_run_at = ${at}::timestamptz where workflow_id = ${workflowId}`;
}

/** Waits until a run has ended. */
function ended(executionId: string) {
  return eventually(`run ${executionId} to end`, () => record(executionId), (row) => ["completed", "failed", "cancelled"].includes(row.status), 30_000);
}

/** A workflow whose schedule block (config as given) leads to `then`'s code. */
function scheduled(config: Record<string, unknown>, code = "return 'ran for ' + <tick.scheduledFor> + ' (' + <tick.timezone> + ')';"): WorkflowStateInput {
  return new WorkflowBuilder()
    .block("tick", "schedule", config, { name: "Tick" })
    .block("work", "function", { code }, { name: "Work" })
    .chain("tick", "work").build();
}

const iso = (text: string) => new Date(text).toISOString();

beforeAll(async () => {
  workspace = await createWorkspace("Schedules");
  await setPlan(workspace.id, "enterprise");
});

afterAll(async () => {
  await sql.end();
});

describe("schedules", () => {
  it("fire when due and not before, as a schedule run of the active deployment", async () => {
    const workflowId = await deployedWorkflow(workspace.members.editor, workspace.id, "Yearly", scheduled({ cronExpression: "0 12 1 1 *" }));
    const row = await schedule(workflowId);
    const year = new Date().getUTCFullYear() + 1;
    expect(row).toMatchObject({ cron_expression: "0 12 1 1 *", timezone: "UTC", status: "active", last_run_at: null });
    expect(iso(String(row.next_run_at))).toBe(`${year}-01-01T12:00:00.000Z`);

    expect(await tick(workflowId, `${year}-01-01T11:59:59Z`)).toEqual([]);
    const [fired] = await tick(workflowId, `${year}-01-01T12:00:01Z`);
    expect(fired).toMatchObject({ outcome: "started", blockId: "tick" });
    const run = await ended(String(fired.executionId));
    expect(run).toMatchObject({ status: "completed", trigger: "schedule", mode: "async", output: { result: `ran for ${year}-01-01T12:00:00.000Z (UTC)` } });
    const after = await schedule(workflowId);
    expect(iso(String(after.last_run_at))).toBe(`${year}-01-01T12:00:00.000Z`);
    expect(iso(String(after.next_run_at))).toBe(`${year + 1}-01-01T12:00:00.000Z`);
  });

  it("read their cron expression in their time zone, presets included", async () => {
    const saoPaulo = await deployedWorkflow(workspace.members.editor, workspace.id, "Morning in São Paulo", scheduled({ scheduleType: "daily", dailyTime: "08:00", timezone: "America/Sao_Paulo" }));
    const row = await schedule(saoPaulo);
    expect(row.cron_expression).toBe("0 8 * * *");
    expect(new Date(String(row.next_run_at)).getUTCHours()).toBe(11);
    await nextRunAt(saoPaulo, "2031-07-01T11:00Z");
    const [fired] = await tick(saoPaulo, "2031-07-01T11:00:10Z");
    const run = await ended(String(fired.executionId));
    expect((run.output as { result: string }).result).toBe("ran for 2031-07-01T11:00:00.000Z (America/Sao_Paulo)");
    expect(iso(String((await schedule(saoPaulo)).next_run_at))).toBe("2031-07-02T11:00:00.000Z");

    const everyFive = await deployedWorkflow(workspace.members.editor, workspace.id, "Every five", scheduled({ scheduleType: "minutes", minutesInterval: 5, timezone: "Asia/Kolkata" }));
    expect((await schedule(everyFive)).cron_expression).toBe("*/5 * * * *");
    await nextRunAt(everyFive, "2031-06-01T00:00Z");
    await tick(everyFive, "2031-06-01T00:00Z");
    expect(iso(String((await schedule(everyFive)).next_run_at))).toBe("2031-06-01T00:05:00.000Z");
  });

  it("neither skip nor double a run across a daylight-saving change", async () => {
    // New York 2031: the clock jumps 02:00 → 03:00 on 9 March (07:00 UTC) and goes back 02:00 → 01:00 on 2 November (06:00 UTC).
    const daily = await deployedWorkflow(workspace.members.editor, workspace.id, "Daily 02:30 New York", scheduled({ cronExpression: "30 2 * * *", timezone: "America/New_York" }, "return <tick.scheduledFor>;"));
    await nextRunAt(daily, "2031-03-08T07:30Z");
    const slots: string[] = [];
    for (let day = 0; day < 3; day++) {
      const due = String((await schedule(daily)).next_run_at);
      const [fired] = await tick(daily, due);
      slots.push(fired.scheduledFor);
      await ended(String(fired.executionId));
    }
    expect(slots.map(iso)).toEqual(["2031-03-08T07:30:00.000Z", "2031-03-09T07:00:00.000Z", "2031-03-10T06:30:00.000Z"]);

    const early = await deployedWorkflow(workspace.members.editor, workspace.id, "Daily 01:30 New York", scheduled({ cronExpression: "30 1 * * *", timezone: "America/New_York" }, "return <tick.scheduledFor>;"));
    await nextRunAt(early, "2031-11-01T05:30Z");
    const autumn: string[] = [];
    for (let day = 0; day < 3; day++) {
      const due = String((await schedule(early)).next_run_at);
      const [fired] = await tick(early, due);
      autumn.push(fired.scheduledFor);
      // A tick during the repeated hour fires nothing more.
      expect(await tick(early, iso(due).replace("05:30", "06:45"))).toEqual([]);
      await ended(String(fired.executionId));
    }
    expect(autumn.map(iso)).toEqual(["2031-11-01T05:30:00.000Z", "2031-11-02T05:30:00.000Z", "2031-11-03T06:30:00.000Z"]);
  });

  it("run an occurrence once even with two tickers at the same time", async () => {
    const workflowId = await deployedWorkflow(workspace.members.editor, workspace.id, "Raced", scheduled({ cronExpression: "0 6 * * *" }));
    await nextRunAt(workflowId, "2032-02-02T06:00Z");
    const tickers = Array.from({ length: 4 }, () => postgres(env.dbUrl, { max: 1, onnotice: () => {} }));
    try {
      // One ticker takes the schedule and holds its transaction open; the others tick meanwhile.
      const holding = tickers[0].begin(async (transaction) => {
        const fired = await tick(workflowId, "2032-02-02T06:00:30Z", transaction as unknown as typeof sql);
        await transaction`select pg_sleep(1)`;
        return fired;
      });
      await new Promise((resolve) => setTimeout(resolve, 200));
      const others = await Promise.all(tickers.slice(1).map((connection) => tick(workflowId, "2032-02-02T06:00:40Z", connection)));
      const all = [await holding, ...others].flat();
      expect(all).toEqual([expect.objectContaining({ outcome: "started" })]);
      await ended(String(all[0].executionId));
      // And all four at once, at the next slot.
      const together = (await Promise.all(tickers.map((connection) => tick(workflowId, "2032-02-03T06:00:05Z", connection)))).flat();
      expect(together).toEqual([expect.objectContaining({ outcome: "started" })]);
      await ended(String(together[0].executionId));
    } finally {
      await Promise.all(tickers.map((connection) => connection.end()));
    }
    const [{ occurrences, runs }] = await sql<{ occurrences: number; runs: number }[]>`
      select (select count(*)::int from public.workflow_schedule_runs where workflow_id = ${workflowId}) as occurrences,
             (select count(*)::int from public.workflow_executions where workflow_id = ${workflowId}) as runs`;
    expect({ occurrences, runs }).toEqual({ occurrences: 2, runs: 2 });
  });

  it("skip an occurrence while the previous run is still going", async () => {
    const workflowId = await deployedWorkflow(workspace.members.editor, workspace.id, "Slow", new WorkflowBuilder()
      .block("tick", "schedule", { cronExpression: "*/10 * * * *" }, { name: "Tick" })
      .block("pause", "wait", { amount: 3, unit: "seconds" }, { name: "Pause" })
      .chain("tick", "pause").build());
    await nextRunAt(workflowId, "2032-05-01T10:00Z");
    const [first] = await tick(workflowId, "2032-05-01T10:00Z");
    expect(first.outcome).toBe("started");
    const [overlapping] = await tick(workflowId, "2032-05-01T10:10Z");
    expect(overlapping).toMatchObject({ outcome: "skipped", reason: `the previous run (${first.executionId}) was still going` });
    expect((await ended(String(first.executionId))).status).toBe("completed");
    const [next] = await tick(workflowId, "2032-05-01T10:20Z");
    expect(next.outcome).toBe("started");
    await ended(String(next.executionId));
  });

  it("fire once after downtime, not once per missed slot", async () => {
    const workflowId = await deployedWorkflow(workspace.members.editor, workspace.id, "Hourly", scheduled({ scheduleType: "hourly", hourlyMinute: 15 }));
    await nextRunAt(workflowId, "2033-01-01T00:15Z");
    const fired = await tick(workflowId, "2033-01-01T09:40Z");
    expect(fired).toHaveLength(1);
    expect(iso(fired[0].scheduledFor)).toBe("2033-01-01T00:15:00.000Z");
    expect(iso(String((await schedule(workflowId)).next_run_at))).toBe("2033-01-01T10:15:00.000Z");
    await ended(String(fired[0].executionId));
  });

  it("pause after their number of consecutive failures, saying why, until resumed", async () => {
    const workflowId = await deployedWorkflow(workspace.members.editor, workspace.id, "Broken", scheduled({ cronExpression: "0 3 * * *", maxConsecutiveFailures: 2 }, "throw new Error('the report source is down');"));
    await nextRunAt(workflowId, "2034-01-01T03:00Z");
    const [first] = await tick(workflowId, "2034-01-01T03:00Z");
    expect((await ended(String(first.executionId))).status).toBe("failed");
    expect((await schedule(workflowId)).consecutive_failures).toBe(1);
    const [second] = await tick(workflowId, "2034-01-02T03:00Z");
    const failed = await ended(String(second.executionId));
    expect(failed).toMatchObject({ status: "failed", level: "error", trigger: "schedule", error_code: "BLOCK_FAILED" });
    const paused = await schedule(workflowId);
    expect(paused).toMatchObject({ status: "paused", next_run_at: null, consecutive_failures: 2 });
    expect(paused.paused_reason).toBe(`Paused after 2 consecutive failed runs; the last (${second.executionId}) failed with BLOCK_FAILED: ${failed.error_message}`);
    expect(paused.paused_reason).toContain("the report source is down");
    expect(await tick(workflowId, "2034-01-03T03:00Z")).toEqual([]);

    const { data, error } = await workspace.members.editor.client.rpc("resume_workflow_schedule", { p_schedule_id: paused.id }).single<Schedule>();
    expect(error).toBeNull();
    expect(data).toMatchObject({ status: "active", paused_reason: null, consecutive_failures: 0 });
  });

  it("follow deploys, rollbacks and undeploys, and refuse an unusable expression or time zone at deploy", async () => {
    const editor = workspace.members.editor;
    const workflowId = await deployedWorkflow(editor, workspace.id, "Changing", scheduled({ cronExpression: "0 7 * * 1" }));
    expect((await schedule(workflowId)).cron_expression).toBe("0 7 * * 1");
    await editor.client.from("workflows").update({ state: scheduled({ scheduleType: "weekly", weeklyDay: "friday", weeklyTime: "18:30", timezone: "Europe/Lisbon" }) }).eq("id", workflowId);
    expect((await editor.client.rpc("deploy_workflow", { p_workflow_id: workflowId })).error).toBeNull();
    expect(await schedule(workflowId)).toMatchObject({ cron_expression: "30 18 * * 5", timezone: "Europe/Lisbon" });
    expect((await editor.client.rpc("activate_deployment", { p_workflow_id: workflowId, p_version: 1 })).error).toBeNull();
    expect((await schedule(workflowId)).cron_expression).toBe("0 7 * * 1");
    expect((await editor.client.rpc("undeploy_workflow", { p_workflow_id: workflowId })).error).toBeNull();
    const { data: gone } = await workspace.members.viewer.client.from("workflow_schedules").select("id").eq("workflow_id", workflowId);
    expect(gone).toEqual([]);

    const badCron = await createWorkflow(editor, workspace.id, "Bad cron", scheduled({ cronExpression: "0 9 * * 8" }));
    const refused = await editor.client.rpc("deploy_workflow", { p_workflow_id: badCron });
    expect(refused.error).toMatchObject({ code: "23514", message: 'Block "Tick" (schedule): cronExpression "0 9 * * 8": day-of-week field "8": 8 is out of range 0-7' });
    expect(JSON.parse(String(refused.error?.details))).toEqual([expect.objectContaining({ code: "invalid_schedule", blockId: "tick", field: "blocks.tick.config.cronExpression" })]);
    const badZone = await createWorkflow(editor, workspace.id, "Bad zone", scheduled({ cronExpression: "0 9 * * *", timezone: "Europe/Atlantis" }));
    expect((await editor.client.rpc("deploy_workflow", { p_workflow_id: badZone })).error).toMatchObject({
      code: "23514", message: 'Block "Tick" (schedule): time zone "Europe/Atlantis" is unknown: use an IANA time-zone name such as America/Sao_Paulo or UTC' });
    const { data: preview, error } = await editor.client.rpc("preview_schedule", { p_cron_expression: "0 9 * * 1-5", p_timezone: "America/Sao_Paulo", p_count: 2, p_after: "2031-01-03T00:00:00Z" });
    expect(error).toBeNull();
    expect((preview as string[]).map(iso)).toEqual(["2031-01-03T12:00:00.000Z", "2031-01-06T12:00:00.000Z"]);
  });

  it("backfill a past range through the data API, each run told its occurrence time", async () => {
    const editor = workspace.members.editor;
    const workflowId = await deployedWorkflow(editor, workspace.id, "Backfilled", scheduled(
      { cronExpression: "0 * * * *", overlap: "allow_all", jitterSeconds: 30 }, "return <tick.scheduledFor> + ' +' + <tick.jitterSeconds> + 's';"));
    const { id } = await schedule(workflowId);
    const hour = 3_600_000;
    const lastHour = Math.floor(Date.now() / hour) * hour;
    const slots = [2, 1, 0].map((hoursAgo) => new Date(lastHour - hoursAgo * hour).toISOString());
    const body = { p_schedule_id: id, p_from: slots[0], p_to: slots[2] };
    // The POST supabase.rpc("backfill_workflow_schedule", body) makes, as docs/triggers.md shows it with curl.
    const post = (token: string, payload: unknown = body) => fetch(`${env.url}/rest/v1/rpc/backfill_workflow_schedule`, {
      method: "POST", headers: { apikey: env.anonKey, Authorization: `Bearer ${token}`, "Content-Type": "application/json" }, body: JSON.stringify(payload),
    });

    const answer = await post(editor.accessToken);
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ scheduleId: id, occurrences: 3, started: 3, buffered: 0, skipped: 0, alreadyRecorded: 0 });

    const { data, error } = await workspace.members.viewer.client.from("workflow_schedule_runs")
      .select("scheduled_for, outcome, source, execution_id, jitter_seconds").eq("workflow_id", workflowId).order("scheduled_for").returns<Occurrence[]>();
    expect(error).toBeNull();
    const occurrences = data ?? [];
    expect(occurrences.map((row) => [iso(row.scheduled_for), row.outcome, row.source])).toEqual(slots.map((slot) => [slot, "started", "backfill"]));
    const runs = await Promise.all(occurrences.map((row) => ended(String(row.execution_id))));
    expect(runs.map((run) => [run.status, run.trigger, (run.output as { result: string }).result]))
      .toEqual(occurrences.map((row, index) => ["completed", "schedule", `${slots[index]} +${row.jitter_seconds}s`]));
    expect(occurrences.every((row) => row.jitter_seconds !== null && row.jitter_seconds >= 0 && row.jitter_seconds <= 30)).toBe(true);

    // Again, with the client: every slot is already recorded, so nothing runs twice.
    const again = await editor.client.rpc("backfill_workflow_schedule", body);
    expect(again.error).toBeNull();
    expect(again.data).toMatchObject({ occurrences: 3, started: 0, alreadyRecorded: 3 });

    const reversed = await post(editor.accessToken, { ...body, p_from: slots[2], p_to: slots[0] });
    expect(reversed.status).toBe(400);
    expect(await reversed.json()).toMatchObject({ code: "22023", message: expect.stringMatching(/^The range is reversed: p_from/) });
    const future = await post(editor.accessToken, { ...body, p_to: new Date(Date.now() + hour).toISOString() });
    expect(future.status).toBe(400);
    expect(await future.json()).toMatchObject({ code: "22023", message: expect.stringMatching(/^A backfill runs past occurrences only/) });
    const viewer = await post(workspace.members.viewer.accessToken);
    expect(viewer.status).toBe(403);
    expect(await viewer.json()).toMatchObject({ code: "42501", message: "Only a workspace editor or above may backfill schedules" });
    const stranger = await post((await createTestUser()).accessToken);
    expect(stranger.status).toBe(404);
    expect(await stranger.json()).toMatchObject({ message: `Schedule ${id} not found` });
    const [{ count }] = await sql<{ count: number }[]>`select count(*)::int as count from public.workflow_executions where workflow_id = ${workflowId}`;
    expect(count).toBe(3);
  });
});
