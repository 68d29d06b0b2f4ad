/**
 * Completion webhooks survive what goes wrong around them: the worker killed mid-delivery,
 * Postgres restarted while deliveries flow, the receiver down. Every delivery still arrives at
 * least once, under its own delivery id, and none is lost.
 *
 * This file kills the stack's processes, so it brings up a supervised stack of its own
 * (test/helpers/own-stack.ts). Its queue worker hides a claimed
 * delivery for 13 s (the 3 s attempt limit of the test stack plus 10 s, the shortest the worker
 * allows), so a delivery whose worker died is made again within seconds.
 */
import postgres, { type Sql } from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../platform/config/stack-config.ts";
import { OwnStack, ownStackSlot, STACK_BOOT_MS } from "../helpers/own-stack.ts";
import { until } from "../helpers/until.ts";
import { RETRY_DELAYS_MS } from "../../supabase/functions/_shared/workflows/outbound/webhooks/retry-policy.ts";
import { WebhookReceiver } from "../stand-ins/webhook-receiver.ts";
import { recordRuns, type RunSpec } from "./logs-helpers.ts";
import { TEST_RETRY_SCALE } from "./webhooks-helpers.ts";

const config = loadConfig("test", ownStackSlot("webhookResilience"));
/** How often the waits below look again. */
const POLL_MS = 200;
/** The seeded, deployed Hello API workflow (supabase/seeds). */
const WORKFLOW = "f5000000-0000-4000-8000-000000000003";
/** The whole retry schedule at the test stack's scale: 14 min 20 s → 8.6 s. */
const SCHEDULE_MS = RETRY_DELAYS_MS.reduce((sum, delay) => sum + delay, 0) * TEST_RETRY_SCALE;

/** Kills a service of the stack with SIGKILL and waits until its supervisor has started it again. */
async function killAndAwaitRestart(stack: OwnStack, name: string): Promise<void> {
  const before = stack.service(name).pid;
  process.kill(before as number, "SIGKILL");
  await until(`${name} to be restarted`, () => stack.service(name).state === "running" && stack.service(name).pid !== before, 60_000, POLL_MS);
}

interface DeliveryRow {
  id: string;
  execution_id: string;
  status: string;
  attempts: number;
}

describe("completion webhooks when things break", () => {
  let stack: OwnStack;
  let sql: Sql;
  let receiver: WebhookReceiver;

  /** Subscribes `path` of the receiver to the seeded workflow, alone: other subscriptions are switched off. */
  async function subscribeOnly(path: string): Promise<void> {
    await asServiceRole((tx) => tx`update public.webhook_subscriptions set active = false`);
    await asServiceRole((tx) => tx`insert into public.webhook_subscriptions (workflow_id, url) values (${WORKFLOW}, ${receiver.url(path)})`);
  }

  /** Runs `statement` as the service role, as the edge functions reach the database. */
  async function asServiceRole<T>(statement: (tx: Sql) => Promise<T>): Promise<T> {
    return (await sql.begin(async (tx) => {
      await tx`select set_config('role', 'service_role', true), set_config('request.jwt.claims', '{"role": "service_role"}', true)`;
      return await statement(tx as unknown as Sql);
    })) as T;
  }

  /** `count` finished runs of the seeded workflow; returns their execution ids. */
  async function runs(count: number): Promise<string[]> {
    const specs: RunSpec[] = Array.from({ length: count }, () => ({ workflowId: WORKFLOW }));
    return await recordRuns(sql, specs, { sameStart: true });
  }

  /** The deliveries of `executions`, as recorded. */
  async function deliveries(executions: string[]): Promise<DeliveryRow[]> {
    return await sql<DeliveryRow[]>`select id, execution_id, status::text, attempts from public.webhook_deliveries where execution_id = any(${executions}::uuid[])`;
  }

  /** Waits until every delivery of `executions` is delivered; returns them. */
  async function allDelivered(executions: string[], timeoutMs: number): Promise<DeliveryRow[]> {
    let rows: DeliveryRow[] = [];
    await until("every delivery to be delivered", async () => {
      rows = await deliveries(executions);
      return rows.length === executions.length && rows.every((row) => row.status === "delivered");
    }, timeoutMs, POLL_MS);
    return rows;
  }

  /** Every delivery id of `rows` arrived at `path` at least once. */
  function expectEveryArrival(path: string, rows: DeliveryRow[]): void {
    const arrived = new Set(receiver.arrivals(path).map((arrival) => arrival.deliveryId));
    expect(rows.filter((row) => !arrived.has(row.id))).toEqual([]);
  }

  beforeAll(async () => {
    stack = await OwnStack.start(config, STACK_BOOT_MS);
    sql = postgres(config.dbUrl, { max: 2, onnotice: () => {} });
    receiver = await WebhookReceiver.start();
    await sql`update platform.queue_workers set visibility_timeout = 5 where queue_name = 'webhook_deliveries'`;
    // Runs are recorded many at a time in one transaction, past Free's 10 runs at once.
    await sql`insert into public.billing_account_overrides (billing_account_id, sync_per_minute, usage_limit, concurrent_runs)
      select billing_account_id, 100000, 100000, 1000 from public.workflows w join public.workspaces s on s.id = w.workspace_id where w.id = ${WORKFLOW}
      on conflict (billing_account_id) do update set sync_per_minute = excluded.sync_per_minute, usage_limit = excluded.usage_limit,
        concurrent_runs = excluded.concurrent_runs`;
  }, STACK_BOOT_MS + 60_000);

  afterAll(async () => {
    await receiver?.stop();
    await sql?.end({ timeout: 5 });
    await stack?.dispose();
  }, 60_000);

  it("makes a delivery again, under the same id, when its worker is killed in the middle of it", async () => {
    receiver.script("/killed", "hang");
    await subscribeOnly("/killed");
    const [executionId] = await runs(1);
    const [first] = await receiver.waitFor("/killed", (arrivals) => arrivals.length >= 1, 30_000);
    await killAndAwaitRestart(stack, "functions");
    const arrivals = await receiver.waitFor("/killed", (all) => all.length >= 2, 60_000);
    expect(arrivals[1].deliveryId).toBe(first.deliveryId);
    expect(arrivals[1].json?.id).toBe(first.deliveryId);
    const [delivery] = await allDelivered([executionId], 30_000);
    expect(delivery.id).toBe(first.deliveryId);
    const attempts = await sql<{ attempt: number; outcome: string }[]>`select attempt, outcome::text from public.webhook_delivery_attempts where delivery_id = ${delivery.id} order by attempt`;
    expect(attempts).toEqual([{ attempt: 1, outcome: "interrupted" }, { attempt: 2, outcome: "delivered" }]);
  }, 120_000);

  it("delivers every one of a stream of deliveries at least once when the worker is killed while they flow", async () => {
    // Slow answers keep many attempts under way (the worker makes 50 at a time) when the kill comes.
    receiver.answerAlways("/stream", { status: 200, delayMs: 1_000 });
    await subscribeOnly("/stream");
    const executions = await runs(150);
    await receiver.waitFor("/stream", (arrivals) => arrivals.length >= 20, 60_000);
    expect(receiver.arrivals("/stream").length).toBeLessThan(executions.length);
    await killAndAwaitRestart(stack, "functions");
    const rows = await allDelivered(executions, 120_000);
    expectEveryArrival("/stream", rows);
    expect(rows.some((row) => row.attempts > 1)).toBe(true);
  }, 180_000);

  it("delivers every one at least once when Postgres is killed and restarted while they flow", async () => {
    // Slow answers keep many attempts under way (the worker makes 50 at a time) when the kill comes.
    receiver.answerAlways("/restart", { status: 200, delayMs: 1_000 });
    await subscribeOnly("/restart");
    const executions = await runs(150);
    await receiver.waitFor("/restart", (arrivals) => arrivals.length >= 20, 60_000);
    expect(receiver.arrivals("/restart").length).toBeLessThan(executions.length);
    await killAndAwaitRestart(stack, "postgres");
    await until("Postgres to answer again", () => sql`select 1`.then(() => true, () => false), 60_000, POLL_MS);
    const rows = await allDelivered(executions, 120_000);
    expectEveryArrival("/restart", rows);
  }, 180_000);

  it("delivers what the receiver missed while it was down for less than the whole schedule (14 min 20 s, scaled)", async () => {
    await subscribeOnly("/outage");
    await receiver.stop();
    const executions = await runs(20);
    const outageMs = SCHEDULE_MS * 0.8;
    await new Promise((resolve) => setTimeout(resolve, outageMs));
    await receiver.restart();
    const rows = await allDelivered(executions, 60_000);
    expectEveryArrival("/outage", rows);
    expect(rows.every((row) => row.attempts >= 4)).toBe(true);
  }, 120_000);

  it("keeps what could not be delivered when the receiver was down longer, and redelivers it under the same ids", async () => {
    await subscribeOnly("/long-outage");
    await receiver.stop();
    const executions = await runs(20);
    await until("every retry to be used", async () => (await deliveries(executions)).every((row) => row.status === "failed"), 60_000, POLL_MS);
    expect((await deliveries(executions)).every((row) => row.attempts === 6)).toBe(true);
    await receiver.restart();
    const [{ subscription }] = await sql<{ subscription: string }[]>`select id as subscription from public.webhook_subscriptions where url = ${receiver.url("/long-outage")}`;
    const [{ queued }] = await asServiceRole((tx) => tx<{ queued: number }[]>`select public.redeliver_failed_webhooks(${subscription}) as queued`);
    expect(queued).toBe(20);
    const rows = await allDelivered(executions, 60_000);
    expectEveryArrival("/long-outage", rows);
  }, 120_000);
});
