/**
 * Retention (`npm run bench -- retention`; docs/retention.md):
 *
 * - the expiry as it runs today: RUNS finished runs in one workspace (the logs bench's generator:
 *   30 days of runs, one in five with per-model rows), all past retention on a clock moved 120
 *   days ahead, removed by workflows_private.expire_workflow_history in its default batches of
 *   2,000 (tombstones, cascades, the file sweep message). Figures: each batch's time (p50, p95,
 *   the longest: how long the job holds its locks) and runs removed a second. Baseline, in the same
 *   run on the same table: the oldest half of the runs removed first by a bare DELETE of 2,000 runs
 *   by id (the same cascades, no retention lookup, tombstones or sweep), so the ratio is what the
 *   expiry's bookkeeping costs.
 * - the partitioning design, on a scratch table of the same rows' shape: one day of ROWS rows in its
 *   own partition, removed by DETACH + DROP of the partition against the baseline of deleting the
 *   same rows in batches of 2,000, measured in the same run. No production table is partitioned yet,
 *   so this measures what the design would buy, not the service.
 */
import postgres from "postgres";
import { ascending, percentile, report, requiredEnv } from "./bench-support.ts";
import { generateLogs } from "./logs-webhooks/logs-data.ts";
import { createBenchWorkspace } from "./logs-webhooks/setup.ts";

/** Runs the expiry removes. */
const RUNS = 200_000;
/** Rows of the scratch day partition (dropped vs deleted). */
const ROWS = 500_000;
const BATCH = 2_000;

/** Runs the retention bench and prints its figures. */
export async function run(): Promise<void> {
  const sql = postgres(requiredEnv("SUPABASE_DB_URL"), { max: 1, onnotice: () => {} });
  try {
    const workspace = await createBenchWorkspace(sql, "Retention bench", "bb300000-0000-4000-8000-000000000001", 10);
    console.log(`Generating ${RUNS.toLocaleString("en")} finished runs over 30 days:`);
    await generateLogs(sql, workspace, 1, RUNS, (line) => console.log(line));

    const timedBatches = async (batch: () => Promise<number>, until: (count: number) => boolean) => {
      const times: number[] = [];
      let count = 0;
      for (;;) {
        const before = performance.now();
        const done = await batch();
        times.push(performance.now() - before);
        count += done;
        if (until(done)) return { times: ascending(times), count };
      }
    };
    let bareRemoved = 0;
    const bare = await timedBatches(async () => (await sql`delete from public.workflow_executions where id in (
        select id from public.workflow_executions where workspace_id = ${workspace.workspaceId} order by started_at limit ${BATCH})`).count,
      (done) => (bareRemoved += done) >= RUNS / 2);
    const bareP95 = percentile(bare.times, 0.95);
    console.log(`  baseline, bare DELETE of ${BATCH.toLocaleString("en")} runs by id (the oldest half): a batch p50 ${percentile(bare.times, 0.5).toFixed(0)} ms, p95 ${bareP95.toFixed(0)} ms`);

    const batches: number[] = [];
    let removed = 0;
    const started = performance.now();
    for (;;) {
      const before = performance.now();
      const [{ outcome }] = await sql<{ outcome: { runs: number; more: boolean } }[]>`
        select workflows_private.expire_workflow_history(now() + interval '120 days', ${BATCH}, ${workspace.workspaceId}::uuid) as outcome`;
      batches.push(performance.now() - before);
      removed += outcome.runs;
      if (!outcome.more) break;
    }
    const total = (performance.now() - started) / 1000;
    const sorted = ascending(batches);
    const p50 = percentile(sorted, 0.5);
    const p95 = percentile(sorted, 0.95);
    console.log(`  expire_workflow_history, batches of ${BATCH.toLocaleString("en")}: ${removed.toLocaleString("en")} runs in ${batches.length} batches, ${total.toFixed(1)} s ` +
      `(${Math.round(removed / total).toLocaleString("en")} runs/s); a batch p50 ${p50.toFixed(0)} ms, p95 ${p95.toFixed(0)} ms, longest ${sorted[sorted.length - 1].toFixed(0)} ms ` +
      `(${(p95 / bareP95).toFixed(2)}× the bare DELETE's p95)`);
    report({ bench: "retention", metric: `expiry batch of ${BATCH.toLocaleString("en")} runs (with cascades and tombstones), p95`, scale: `${removed.toLocaleString("en")} runs`,
      value: p95, unit: "ms", higherIsBetter: false, baseline: { name: `bare DELETE of ${BATCH} runs by id, p95`, value: bareP95 } });

    // The partitioning design on a scratch table: one day in its own partition.
    await sql`drop schema if exists bench_retention cascade`;
    await sql`create schema bench_retention`;
    await sql`create table bench_retention.runs (id uuid not null default gen_random_uuid(), workspace_id uuid not null, started_at timestamptz not null,
      output jsonb, trace_spans jsonb, primary key (id, started_at)) partition by range (started_at)`;
    for (const [name, from, to] of [["d1", "2026-01-01", "2026-01-02"], ["d2", "2026-01-02", "2026-01-03"]]) {
      await sql.unsafe(`create table bench_retention.runs_${name} partition of bench_retention.runs for values from ('${from}') to ('${to}')`);
    }
    await sql`create index on bench_retention.runs (workspace_id, started_at desc, id desc)`;
    const fill = async (day: string) => {
      await sql`insert into bench_retention.runs (workspace_id, started_at, output, trace_spans)
        select ${workspace.workspaceId}, ${day}::timestamptz + (n % 86400) * interval '1 second', jsonb_build_object('n', n), jsonb_build_array(jsonb_build_object('blockId', 'done'))
        from generate_series(1, ${ROWS}) n`;
      await sql`vacuum analyze bench_retention.runs`;
    };
    console.log(`Scratch partitions: two days of ${ROWS.toLocaleString("en")} rows each`);
    await fill("2026-01-01");
    await fill("2026-01-02");

    const deleteStarted = performance.now();
    for (;;) {
      const deleted = await sql`delete from bench_retention.runs where (id, started_at) in (
        select id, started_at from bench_retention.runs where started_at < '2026-01-02' limit ${BATCH})`;
      if (deleted.count === 0) break;
    }
    const deleteMs = performance.now() - deleteStarted;

    const dropStarted = performance.now();
    await sql`alter table bench_retention.runs detach partition bench_retention.runs_d2`;
    await sql`drop table bench_retention.runs_d2`;
    const dropMs = performance.now() - dropStarted;
    await sql`drop schema bench_retention cascade`;

    console.log(`  one day of ${ROWS.toLocaleString("en")} rows: DETACH + DROP of its partition ${dropMs.toFixed(0)} ms; baseline, DELETE in batches of ${BATCH.toLocaleString("en")}: ` +
      `${(deleteMs / 1000).toFixed(1)} s (${(dropMs / deleteMs).toFixed(4)}× the baseline)`);
    report({ bench: "retention", metric: "remove a day of rows: DETACH + DROP its partition (scratch table)", scale: `${ROWS.toLocaleString("en")} rows`,
      value: dropMs, unit: "ms", higherIsBetter: false, baseline: { name: `DELETE the same rows in batches of ${BATCH}`, value: deleteMs },
      goal: { text: "≤ 1 s", met: dropMs <= 1000 } });
  } finally {
    await sql.end();
  }
}
