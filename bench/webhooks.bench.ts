/**
 * Completion webhooks bench (`npm run bench -- webhooks`), through the real pieces: runs finished
 * by finish_workflow_run queue their deliveries (the outbox), the platform's queue poller invokes
 * the `webhook-deliveries` function, which signs and POSTs each event through the outbound guard
 * to a local receiver that verifies every signature (test/stand-ins/webhook-receiver.ts).
 *
 * - throughput: 10,000 deliveries queued while the worker is paused, then drained (goal ≥ 500/s);
 * - latency: runs ending at a steady 40 a second; from each run's end to its event's arrival
 *   (goal p95 ≤ 1 s);
 * - what delivery costs the run: finish_workflow_run with 0, 1 and 5 subscriptions.
 * The summary rows: deliveries/s beside the receiver's own ceiling (the same deliveries POSTed to it
 * straight from the bench, 50 in flight, as the worker sends them), the first attempt's p95, and
 * finish_workflow_run with one subscription beside none. Expects the stack's database in
 * SUPABASE_DB_URL. Figures: docs/webhooks.md, "Benchmarks"; docs/performance.md.
 */
import { loadavg } from "node:os";
import postgres, { type Sql } from "postgres";
import { type Arrival, WebhookReceiver } from "../test/stand-ins/webhook-receiver.ts";
import { runLoad } from "./gamification/load.ts";
import { createBenchWorkspace } from "./logs-webhooks/setup.ts";
import { percentile, report, requiredEnv, verdict } from "./bench-support.ts";
import { until } from "../test/helpers/until.ts";

const SECRET = "whsec_bench_secret_0123456789abcdef";
const THROUGHPUT_DELIVERIES = 10_000;
const GOAL_PER_SECOND = 500;
const GOAL_FIRST_ATTEMPT_P95_MS = 1_000;
/** Attempts the worker keeps in flight (its batch size on the stack). */
const IN_FLIGHT = 50;

/** Runs `statement` as the service role, as the edge functions reach the database. */
async function asServiceRole<T>(sql: Sql, statement: (tx: Sql) => Promise<T>): Promise<T> {
  return (await sql.begin(async (tx) => {
    await tx`select set_config('role', 'service_role', true), set_config('request.jwt.claims', '{"role": "service_role"}', true)`;
    return await statement(tx as unknown as Sql);
  })) as T;
}

/** `count` runs of `workflowId` admitted and finished in one transaction; their ids. */
async function finishRuns(sql: Sql, workflowId: string, count: number): Promise<string[]> {
  return await asServiceRole(sql, async (tx) => {
    const rows = await tx<{ id: string }[]>`select (public.admit_workflow_run(${workflowId}::uuid, 'webhook', 'sync') ->> 'executionId') as id from generate_series(1, ${count})`;
    const ids = rows.map((row) => row.id);
    await tx`select public.finish_workflow_run(id, 'completed', '{"ok": true}') from unnest(${ids}::uuid[]) id`;
    return ids;
  });
}

/** Subscribes `url` (signed) to `workflowId`. */
async function subscribe(sql: Sql, workflowId: string, url: string): Promise<void> {
  await asServiceRole(sql, (tx) => tx`insert into public.webhook_subscriptions (workflow_id, url, secret) values (${workflowId}, ${url}, ${SECRET})`);
}

/**
 * The receiver's own ceiling: the deliveries that arrived, POSTed to it again straight from the bench
 * with the same headers and bodies, IN_FLIGHT at a time (the receiver verifies each signature again).
 */
async function receiverCeiling(receiver: WebhookReceiver, arrivals: Arrival[]): Promise<number> {
  const requests = arrivals.map((arrival) => ({
    method: "POST" as const, url: receiver.url("/ceiling"), token: "none",
    headers: Object.fromEntries(["content-type", "service-event", "service-timestamp", "service-delivery-id", "idempotency-key", "service-signature"]
      .map((name) => [name, arrival.headers[name]])),
    body: arrival.json,
  }));
  await runLoad(requests.slice(0, 200), IN_FLIGHT);
  return (await runLoad(requests, IN_FLIGHT)).perSecond;
}

/** Deliveries per second when 10,000 are waiting: from the first arrival to the last. */
async function measureThroughput(sql: Sql, receiver: WebhookReceiver, workflowId: string): Promise<void> {
  await subscribe(sql, workflowId, receiver.url("/throughput"));
  await sql`update platform.queue_workers set enabled = false where queue_name = 'webhook_deliveries'`;
  for (let queued = 0; queued < THROUGHPUT_DELIVERIES; queued += 500) await finishRuns(sql, workflowId, 500);
  await sql`update platform.queue_workers set enabled = true where queue_name = 'webhook_deliveries'`;
  const released = Date.now();
  await until("every delivery to arrive", () => receiver.arrivals("/throughput").length >= THROUGHPUT_DELIVERIES, 180_000, 50);
  const arrivals = receiver.arrivals("/throughput");
  const seconds = (arrivals[arrivals.length - 1].at - arrivals[0].at) / 1000;
  const perSecond = arrivals.length / seconds;
  const invalid = arrivals.filter((arrival) => arrival.signatureValid !== true).length;
  const distinct = new Set(arrivals.map((arrival) => arrival.deliveryId)).size;
  console.log(`  ${verdict(perSecond >= GOAL_PER_SECOND)} ${THROUGHPUT_DELIVERIES.toLocaleString("en")} queued deliveries drained at ${perSecond.toFixed(0)}/s ` +
    `(goal ≥ ${GOAL_PER_SECOND}/s; first arrival ${arrivals[0].at - released} ms after the worker was enabled, last after ${((arrivals[arrivals.length - 1].at - released) / 1000).toFixed(1)} s); ` +
    `${distinct.toLocaleString("en")} distinct delivery ids, ${invalid} bad signatures`);
  const ceiling = await receiverCeiling(receiver, arrivals);
  console.log(`  · the receiver's ceiling: the same ${arrivals.length.toLocaleString("en")} deliveries POSTed straight from the bench, ${IN_FLIGHT} in flight: ${ceiling.toFixed(0)}/s`);
  report({
    bench: "webhooks", metric: `${THROUGHPUT_DELIVERIES.toLocaleString("en")} queued deliveries drained`, scale: `${IN_FLIGHT} in flight`, value: perSecond, unit: "deliveries/s",
    higherIsBetter: true, baseline: { name: "bare POSTs to the receiver", value: ceiling }, goal: { text: `≥ ${GOAL_PER_SECOND}/s`, met: perSecond >= GOAL_PER_SECOND },
  });
  await until("every delivery to be recorded", async () => {
    const [{ pending }] = await sql<{ pending: number }[]>`select count(*)::int as pending from public.webhook_deliveries where status <> 'delivered' and workflow_id = ${workflowId}`;
    return pending === 0;
  }, 60_000, 50);
  await sql`update public.webhook_subscriptions set active = false where workflow_id = ${workflowId}`;
}

/** From a run's end to its event's arrival, with runs ending at a steady 40 a second for 25 s. */
async function measureLatency(sql: Sql, receiver: WebhookReceiver, workflowId: string): Promise<void> {
  await subscribe(sql, workflowId, receiver.url("/latency"));
  const executions: string[] = [];
  const started = Date.now();
  for (let tick = 0; tick < 250; tick += 1) {
    executions.push(...(await finishRuns(sql, workflowId, 4)));
    const next = started + (tick + 1) * 100;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - Date.now())));
  }
  await until("every latency delivery to arrive", () => receiver.arrivals("/latency").length >= executions.length, 60_000, 50);
  const ended = new Map((await sql<{ id: string; ended: number }[]>`
    select id::text, (extract(epoch from ended_at) * 1000)::float8 as ended from public.workflow_executions where id = any(${executions}::uuid[])`).map((row) => [row.id, row.ended]));
  const latencies = receiver.arrivals("/latency")
    .map((arrival) => arrival.at - (ended.get(String((arrival.json as { data: { executionId: string } }).data.executionId)) ?? Number.NaN))
    .sort((a, b) => a - b);
  const p95 = percentile(latencies, 0.95);
  console.log(`  ${verdict(p95 <= GOAL_FIRST_ATTEMPT_P95_MS)} first attempt after the run ended, ${executions.length} runs at 40/s: ` +
    `p50 ${percentile(latencies, 0.5).toFixed(0)} ms, p95 ${p95.toFixed(0)} ms, max ${latencies[latencies.length - 1].toFixed(0)} ms (goal p95 ≤ ${GOAL_FIRST_ATTEMPT_P95_MS} ms)`);
  report({
    bench: "webhooks", metric: "first attempt after the run ended: p95", scale: `${executions.length} runs at 40/s`, value: p95, unit: "ms", higherIsBetter: false,
    goal: { text: `p95 ≤ ${GOAL_FIRST_ATTEMPT_P95_MS} ms`, met: p95 <= GOAL_FIRST_ATTEMPT_P95_MS },
  });
}

/** finish_workflow_run's latency (one call per transaction, as from an edge function) with `subscriptions` active subscriptions. */
async function finishLatency(sql: Sql, workflowId: string): Promise<{ p50: number; p95: number }> {
  const latencies: number[] = [];
  for (let i = 0; i < 400; i += 1) {
    const [{ id }] = await asServiceRole(sql, (tx) => tx<{ id: string }[]>`select (public.admit_workflow_run(${workflowId}::uuid, 'webhook', 'sync') ->> 'executionId') as id`);
    const started = performance.now();
    await asServiceRole(sql, (tx) => tx`select public.finish_workflow_run(${id}::uuid, 'completed', '{"ok": true}')`);
    if (i >= 50) latencies.push(performance.now() - started);
  }
  latencies.sort((a, b) => a - b);
  return { p50: percentile(latencies, 0.5), p95: percentile(latencies, 0.95) };
}

/** Sets up a workspace and a receiver, and prints the three measurements. */
export async function run(): Promise<void> {
  const sql = postgres(requiredEnv("SUPABASE_DB_URL"), { max: 2, onnotice: () => {} });
  const receiver = await WebhookReceiver.start();
  for (const path of ["/throughput", "/latency", "/sink"]) receiver.expectSecret(path, SECRET);
  try {
    const workspace = await createBenchWorkspace(sql, "Webhooks bench", "bb200000-0000-4000-8000-000000000001", 8);
    const [throughput, latency, none, one, five] = workspace.workflowIds;
    console.log(`Load average (1/5/15 min) before measuring: ${loadavg().map((load) => load.toFixed(1)).join(" / ")}: other work on the machine shares its 2 cores.`);
    console.log("Deliveries to a local receiver that verifies every signature (the worker: 50 attempts in flight, the stack's default):");
    await measureThroughput(sql, receiver, throughput);
    await measureLatency(sql, receiver, latency);

    for (let i = 0; i < 5; i += 1) await subscribe(sql, five, receiver.url("/sink"));
    await subscribe(sql, one, receiver.url("/sink"));
    const costs = [await finishLatency(sql, none), await finishLatency(sql, one), await finishLatency(sql, five)];
    console.log(`  · finish_workflow_run round trip with 0 / 1 / 5 subscriptions: p50 ${costs.map((cost) => cost.p50.toFixed(2)).join(" / ")} ms, ` +
      `p95 ${costs.map((cost) => cost.p95.toFixed(2)).join(" / ")} ms (the outbox rows and messages are the whole difference; delivery itself happens after)`);
    report({
      bench: "webhooks", metric: "finish_workflow_run with 1 subscription: p50", scale: "one call a transaction", value: costs[1].p50, unit: "ms", higherIsBetter: false,
      baseline: { name: "no subscription", value: costs[0].p50 },
    });
  } finally {
    await receiver.stop();
    await sql.end();
  }
}
