/**
 * Logs API bench (`npm run bench -- logs`): runs in one workspace growing from 1,000 to 100,000 to
 * a million (logs-webhooks/logs-data.ts; `--log-rows 1000,50000` measures other sizes), and at each
 * size a filtered page of 100 through the HTTP API (gateway → `api` edge function →
 * workflow_logs_json) for each filter of GET /api/v1/logs, goal p95 ≤ 20 ms at a million; beside it
 * the same page from workflow_logs_json() called straight over SQL, and the bare keyset query that
 * reads the page (no key, no rate limit, no JSON) as the floor. Reports one summary row per filter
 * and size (HTTP p95 beside the bare page's p95) and the goal row. Expects the stack's coordinates in
 * SUPABASE_URL, SUPABASE_SERVICE_ROLE_KEY and SUPABASE_DB_URL. Figures: docs/performance.md, "Logs API".
 */
import { loadavg } from "node:os";
import postgres, { type Sql } from "postgres";
import type { BenchOptions } from "../scripts/bench.ts";
import { decodeCursor, encodeCursor } from "../supabase/functions/_shared/workflows/api/keyset-cursor.ts";
import { loadConfig } from "../platform/config/stack-config.ts";
import { type LoadResult, runLoad } from "./gamification/load.ts";
import { measureCpu, servicePids } from "./process-cpu.ts";
import { generatedRunId, generateLogs, LOG_SIZES } from "./logs-webhooks/logs-data.ts";
import { type BenchWorkspace, createBenchWorkspace } from "./logs-webhooks/setup.ts";
import { percentile, report, requiredEnv, verdict } from "./bench-support.ts";

const GOAL_P95_MS = 20;
const REQUESTS = 200;

/** One filter measured: its query parameters for each request, and the bare SQL that reads the same page. */
interface Case {
  name: string;
  /** The query of request `i` (varied, so no two requests read exactly the same page). */
  query(i: number): Record<string, string>;
  /** The floor: the page's keyset query alone, for request `i`. */
  floor(sql: Sql, i: number): Promise<unknown>;
}

/** p50 and p95 (ms) of `count` sequential calls of `call`, after a few untimed ones. */
async function timeCalls(count: number, call: (i: number) => Promise<unknown>): Promise<{ p50: number; p95: number }> {
  for (let i = 0; i < 5; i += 1) await call(count + i);
  const latencies: number[] = [];
  for (let i = 0; i < count; i += 1) {
    const started = performance.now();
    await call(i);
    latencies.push(performance.now() - started);
  }
  latencies.sort((a, b) => a - b);
  return { p50: percentile(latencies, 0.5), p95: percentile(latencies, 0.95) };
}

/** workflow_logs_json() called straight over SQL with what the endpoint would pass for `query`. */
function callWorkflowLogs(sql: Sql, workspace: BenchWorkspace, query: Record<string, string>): Promise<unknown> {
  const cursor = query.cursor ? decodeCursor(query.cursor) : null;
  const list = (value: string | undefined) => value?.split(",") ?? null;
  return sql.unsafe(
    `select public.workflow_logs_json(p_api_key => $1, p_workspace_id => $2::uuid, p_workflow_ids => $3::uuid[], p_folder_ids => $4::uuid[],
      p_triggers => $5::text[], p_level => $6, p_start_date => $7::timestamptz, p_end_date => $8::timestamptz, p_min_duration_ms => $9::int,
      p_min_cost => $10::numeric, p_model => $11, p_details => $12, p_include_trace_spans => $13::boolean, p_include_final_output => $14::boolean,
      p_cursor_started_at => $15::timestamptz, p_cursor_id => $16::uuid)`,
    [workspace.apiKey, workspace.workspaceId, list(query.workflowIds), list(query.folderIds), list(query.triggers), query.level ?? null,
      query.startDate ?? null, query.endDate ?? null, query.minDurationMs ?? null, query.minCost ?? null, query.model ?? null, query.details ?? "basic",
      query.includeTraceSpans === "true", query.includeFinalOutput === "true", cursor?.at ?? null, cursor?.id ?? null] as never[],
    { prepare: true },
  );
}

/** The filters measured on a workspace of `size` runs (each request varies its workflow, window or cursor). */
async function cases(sql: Sql, workspace: BenchWorkspace, size: number): Promise<Case[]> {
  const { workspaceId } = workspace;
  const workflow = (i: number) => workspace.workflowIds[i % workspace.workflowIds.length];
  const [{ newest }] = await sql<{ newest: Date }[]>`select max(started_at) as newest from public.workflow_executions where workspace_id = ${workspaceId}`;
  const dayBefore = (i: number) => new Date(newest.getTime() - (1 + (i % 25)) * 86_400_000);
  // Cursors deep into the log: the keyset of runs spread over the whole month.
  const deep = await sql<{ started_at: string; id: string; at: Date }[]>`
    select workflows_private.cursor_time(started_at) as started_at, id, started_at as at from public.workflow_executions
    where workspace_id = ${workspaceId} and id = any(${Array.from({ length: 300 }, (_, k) => generatedRunId(1 + ((k * 4999) % size)))}::uuid[])`;
  const cursorOf = (i: number) => encodeCursor({ at: deep[i % deep.length].started_at, id: deep[i % deep.length].id, order: "desc" });
  const page = (where: string, ...values: unknown[]) => sql.unsafe(
    `select id, workflow_id, level, trigger, started_at, ended_at, duration_ms, cost_total, files from public.workflow_executions e
     where e.workspace_id = $1 and e.started_at is not null ${where} order by e.started_at desc, e.id desc limit 101`, [workspaceId, ...values] as never[], { prepare: true });
  return [
    { name: "no filter, first page", query: () => ({}), floor: () => page("") },
    {
      name: "a page deep in the month (cursor)",
      query: (i) => ({ cursor: cursorOf(i) }),
      floor: (_, i) => page("and (e.started_at, e.id) < ($2, $3)", deep[i % deep.length].at, deep[i % deep.length].id),
    },
    { name: "one workflow", query: (i) => ({ workflowIds: workflow(i) }), floor: (_, i) => page("and e.workflow_id = $2", workflow(i)) },
    { name: "three workflows", query: (i) => ({ workflowIds: [workflow(i), workflow(i + 7), workflow(i + 19)].join(",") }), floor: (_, i) => page("and e.workflow_id = any($2)", [workflow(i), workflow(i + 7), workflow(i + 19)]) },
    { name: "a folder and its subfolder", query: () => ({ folderIds: workspace.folderIds[0] }), floor: () => page("and e.workflow_id = any($2)", workspace.workflowIds.slice(0, 10)) },
    { name: "trigger chat (3% of runs)", query: () => ({ triggers: "chat" }), floor: () => page("and e.trigger = 'chat'") },
    { name: "triggers api,webhook (75%)", query: () => ({ triggers: "api,webhook" }), floor: () => page("and e.trigger in ('api', 'webhook')") },
    { name: "triggers manual,chat (10%)", query: () => ({ triggers: "manual,chat" }), floor: () => page("and e.trigger in ('manual', 'chat')") },
    { name: "level error (10%)", query: () => ({ level: "error" }), floor: () => page("and e.level = 'error'") },
    {
      name: "one day (start and end dates)",
      query: (i) => ({ startDate: dayBefore(i).toISOString(), endDate: new Date(dayBefore(i).getTime() + 86_400_000).toISOString() }),
      floor: (_, i) => page("and e.started_at >= $2 and e.started_at <= $3", dayBefore(i), new Date(dayBefore(i).getTime() + 86_400_000)),
    },
    { name: "minDurationMs 15000 (1%)", query: () => ({ minDurationMs: "15000" }), floor: () => page("and e.ended_at is not null and e.duration_ms >= 15000") },
    { name: "minCost 0.01 (11%)", query: () => ({ minCost: "0.01" }), floor: () => page("and e.ended_at is not null and e.cost_total >= 0.01") },
    {
      name: "model o4-mini (4%)",
      query: () => ({ model: "o4-mini" }),
      floor: () => sql`select e.id, e.workflow_id, e.level, e.trigger, e.started_at from workflows_private.execution_models m join public.workflow_executions e on e.id = m.execution_id
        where m.workspace_id = ${workspaceId} and m.model = 'o4-mini' order by m.started_at desc, m.execution_id desc limit 101`,
    },
    { name: "errors of one workflow", query: (i) => ({ workflowIds: workflow(i), level: "error" }), floor: (_, i) => page("and e.workflow_id = $2 and e.level = 'error'", workflow(i)) },
    {
      name: "errors of one workflow over 10 s (0.05%)",
      query: (i) => ({ workflowIds: workflow(i), level: "error", minDurationMs: "10000" }),
      floor: (_, i) => page("and e.workflow_id = $2 and e.level = 'error' and e.ended_at is not null and e.duration_ms >= 10000", workflow(i)),
    },
    {
      name: "full details with trace spans and output",
      query: () => ({ details: "full", includeTraceSpans: "true", includeFinalOutput: "true" }),
      floor: () => sql`select e.*, w.name, w.description from public.workflow_executions e join public.workflows w on w.id = e.workflow_id
        where e.workspace_id = ${workspaceId} order by e.started_at desc, e.id desc limit 101`,
    },
  ];
}

/** The Postgres backends of the edge functions' pools (the connections serving the API), by name for measureCpu. */
async function edgeBackends(sql: Sql): Promise<Record<string, number>> {
  const rows = await sql<{ pid: number }[]>`select pid from pg_stat_activity where application_name = 'orbita-edge-function'`;
  return Object.fromEntries(rows.map((row) => [`backend ${row.pid}`, row.pid]));
}

/** p50 / p95 of a measurement, as printed. */
function describe(figures: { p50: number; p95: number }): string {
  return `${figures.p50.toFixed(1)} / ${figures.p95.toFixed(1)}`;
}

/** The sizes to measure: `--log-rows 1000,100000` or LOG_SIZES, ascending. */
function sizesOf(options: BenchOptions | undefined): number[] {
  const flag = options?.flags["log-rows"];
  const sizes = flag ? flag.split(",").map(Number) : [...LOG_SIZES];
  if (sizes.some((size) => !Number.isInteger(size) || size < 1)) throw new Error(`--log-rows takes whole numbers of runs, comma-separated (got ${flag})`);
  return sizes.sort((a, b) => a - b);
}

/** "1k rows", "100k rows", "1M rows". */
function sizeLabel(size: number): string {
  if (size >= 1_000_000 && size % 1_000_000 === 0) return `${size / 1_000_000}M rows`;
  if (size >= 1_000 && size % 1_000 === 0) return `${size / 1_000}k rows`;
  return `${size} rows`;
}

/** Grows the data set step by step, measures each filter three ways at each size, and reports the figures. */
export async function run(options?: BenchOptions): Promise<void> {
  const url = requiredEnv("SUPABASE_URL");
  // The logs API reads only x-api-key; the service role key in Authorization keeps the local
  // gateway's per-address budget (500 function calls a minute) from refusing the bench's requests.
  const gatewayToken = requiredEnv("SUPABASE_SERVICE_ROLE_KEY");
  // One connection: the generator's seeded random() lives in its session.
  const sql = postgres(requiredEnv("SUPABASE_DB_URL"), { max: 1, onnotice: () => {} });
  try {
    const workspace = await createBenchWorkspace(sql, "Logs bench", "bb100000-0000-4000-8000-000000000001", 50);
    const { gateway, functions } = servicePids(loadConfig("bench"));
    const stackPids = { gateway, functions };
    const [{ pid: ownBackend }] = await sql<{ pid: number }[]>`select pg_backend_pid() as pid`;
    const sizes = sizesOf(options);
    let generated = 0;
    for (const size of sizes) {
      console.log(`\nGrowing the workspace to ${size.toLocaleString("en")} runs (SQL, generate_series):`);
      await generateLogs(sql, workspace, generated + 1, size, (line) => console.log(line));
      generated = size;

      console.log(`Load average (1/5/15 min) before measuring: ${loadavg().map((load) => load.toFixed(1)).join(" / ")}: other work on the machine shares its 2 cores.`);
      console.log(`A page of 100 per filter at ${size.toLocaleString("en")} runs, ${REQUESTS} requests each, one at a time: HTTP (the API) · workflow_logs_json() over SQL · the bare keyset query (floor), p50 / p95 ms`);
      console.log("  (then the CPU each page cost, from /proc: over HTTP, in the gateway · the functions host · the edge function's Postgres backend; over SQL, in the backend for workflow_logs_json() · for the bare query; ms a page)");
      let worst = 0;
      const backendCpu = { fn: 0, bare: 0 };
      const filters = await cases(sql, workspace, size);
      for (const measured of filters) {
        const requests = Array.from({ length: REQUESTS }, (_, i) => ({
          method: "GET" as const, token: gatewayToken, headers: { "x-api-key": workspace.apiKey },
          url: `${url}/functions/v1/api/v1/logs?${new URLSearchParams({ workspaceId: workspace.workspaceId, limit: "100", ...measured.query(i) })}`,
        }));
        await runLoad(requests.slice(0, 10), 1);
        const overHttp = await measureCpu({ ...stackPids, ...(await edgeBackends(sql)) }, () => runLoad(requests, 1));
        const http: LoadResult = overHttp.result;
        if (Object.keys(http.statuses).some((status) => status !== "200")) throw new Error(`${measured.name}: ${JSON.stringify(http.statuses)}`);
        const direct = await measureCpu({ backend: ownBackend }, () => timeCalls(REQUESTS, (i) => callWorkflowLogs(sql, workspace, measured.query(i))));
        const floor = await measureCpu({ backend: ownBackend }, () => timeCalls(REQUESTS, (i) => measured.floor(sql, i)));
        worst = Math.max(worst, http.p95);
        backendCpu.fn += direct.cpuMs.backend;
        backendCpu.bare += floor.cpuMs.backend;
        const perPage = (ms: number) => (ms / REQUESTS).toFixed(2);
        const edgeBackendMs = Object.entries(overHttp.cpuMs).filter(([name]) => name.startsWith("backend")).reduce((sum, [, ms]) => sum + ms, 0);
        console.log(`  ${verdict(http.p95 <= GOAL_P95_MS)} ${measured.name.padEnd(42)} HTTP ${describe(http)}   workflow_logs_json() ${describe(direct.result)}   bare SQL ${describe(floor.result)}`);
        console.log(`    ${"".padEnd(42)} CPU: HTTP ${perPage(overHttp.cpuMs.gateway)} · ${perPage(overHttp.cpuMs.functions)} · ${perPage(edgeBackendMs)}   SQL ${perPage(direct.cpuMs.backend)} · bare ${perPage(floor.cpuMs.backend)}`);
        report({
          bench: "logs", metric: `page of 100, ${measured.name}: HTTP p95`, scale: sizeLabel(size), value: http.p95, unit: "ms", higherIsBetter: false,
          baseline: { name: "bare SQL page p95", value: floor.result.p95 },
        });
      }
      console.log(`  ${verdict(worst <= GOAL_P95_MS)} worst filtered page p95 ${worst.toFixed(1)} ms at ${size.toLocaleString("en")} runs (goal ≤ ${GOAL_P95_MS} ms at a million)`);
      const pages = REQUESTS * filters.length;
      console.log(`  · backend CPU a page, all filters: workflow_logs_json() ${(backendCpu.fn / pages).toFixed(2)} ms, bare SQL ${(backendCpu.bare / pages).toFixed(2)} ms`);
      report({
        bench: "logs", metric: "workflow_logs_json() backend CPU a page, all filters", scale: sizeLabel(size), value: backendCpu.fn / pages, unit: "ms",
        higherIsBetter: false, baseline: { name: "bare SQL page", value: backendCpu.bare / pages },
      });
      // The goal is set at a million runs; a smaller largest size (--log-rows) is reported without it.
      if (size === sizes[sizes.length - 1]) {
        report({
          bench: "logs", metric: "worst filtered page of 100: HTTP p95", scale: sizeLabel(size), value: worst, unit: "ms", higherIsBetter: false,
          goal: size >= 1_000_000 ? { text: `p95 ≤ ${GOAL_P95_MS} ms`, met: worst <= GOAL_P95_MS } : undefined,
        });
      }
    }
  } finally {
    await sql.end();
  }
}
