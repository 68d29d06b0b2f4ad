/**
 * The logs bench's data set, generated in SQL: finished runs in one workspace (the worst case for
 * the workspace's keyset index) over the last 30 days, three runs to each start time so ties are
 * common, spread over 50 workflows and the five triggers (api 50%, webhook 25%, schedule 15%,
 * manual 7%, chat 3%), one in ten failed, durations from milliseconds to seconds, and one in five
 * using a model (five models), with the per-model rows the model filter reads. The random draws
 * are seeded, so every run of the bench measures the same data.
 *
 * The runs grow in steps (1,000, then to 100,000, then to a million): each step's runs are spread
 * over the same 30 days, so at every size the workspace's runs look alike, only denser.
 */
import type { Sql } from "postgres";
import type { BenchWorkspace } from "./setup.ts";

/** The sizes measured, cumulative: runs in the workspace after each step. */
export const LOG_SIZES = [1_000, 100_000, 1_000_000] as const;
/** The models runs used, with how they are spread (each one in five of the runs that used one). */
export const MODELS = ["gpt-4o", "gpt-4o-mini", "claude-sonnet-4-5", "o4-mini", "my-fine-tune"] as const;

const CHUNK = 100_000;

/** The id of the workspace's `n`th generated run (1-based): runs 1 to `size` exist once the workspace has `size`. */
export function generatedRunId(n: number): string {
  return `e1000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`;
}

/**
 * Adds runs `from` to `to` (1-based, inclusive) to `workspace`, spread over the last 30 days, with
 * their per-model rows and fresh statistics; prints progress through `log`.
 */
export async function generateLogs(sql: Sql, workspace: BenchWorkspace, from: number, to: number, log: (line: string) => void): Promise<void> {
  const started = Date.now();
  // Seeded at every step: a step's runs are the same whatever was generated before it.
  await sql`select setseed(0.42)`;
  const spacing = 3 / (to - from + 1);
  for (let first = from; first <= to; first += CHUNK) {
    const last = Math.min(to, first + CHUNK - 1);
    await sql`
      insert into public.workflow_executions (id, workspace_id, workflow_id, billing_account_id, trigger, mode, status, level,
        created_at, started_at, ended_at, duration_ms, attempt, cost_total, cost, output, trace_spans)
      select
        ('e1000000-0000-4000-8000-' || lpad(to_hex(n), 12, '0'))::uuid, ${workspace.workspaceId},
        (${workspace.workflowIds}::uuid[])[1 + (n % ${workspace.workflowIds.length})], ${workspace.accountId},
        (case when r.t < 0.50 then 'api' when r.t < 0.75 then 'webhook' when r.t < 0.90 then 'schedule' when r.t < 0.97 then 'manual' else 'chat' end)::public.workflow_trigger,
        'sync', (case when r.f < 0.1 then 'failed' else 'completed' end)::public.workflow_run_status,
        (case when r.f < 0.1 then 'error' else 'info' end)::public.workflow_log_level,
        s.at, s.at, s.at + make_interval(secs => d.ms / 1000.0), d.ms, 1,
        0.001 + coalesce(c.model_cost, 0),
        jsonb_build_object('total', 0.001 + coalesce(c.model_cost, 0), 'base', 0.001, 'input', coalesce(c.model_cost, 0) / 2, 'output', coalesce(c.model_cost, 0) / 2,
          'tokens', jsonb_build_object('prompt', coalesce(c.tokens, 0), 'completion', coalesce(c.tokens, 0) / 4, 'total', coalesce(c.tokens, 0) * 5 / 4),
          'models', case when c.model is null then '{}'::jsonb else jsonb_build_object(c.model, jsonb_build_object('input', c.model_cost / 2, 'output', c.model_cost / 2,
            'total', c.model_cost, 'tokens', jsonb_build_object('prompt', c.tokens, 'completion', c.tokens / 4, 'total', c.tokens * 5 / 4), 'priced', true)) end),
        jsonb_build_object('n', n, 'ok', r.f >= 0.1),
        jsonb_build_array(jsonb_build_object('blockId', 'done', 'status', case when r.f < 0.1 then 'error' else 'success' end, 'durationMs', d.ms))
      from generate_series(${first}::int, ${last}::int) n
      -- Naming n makes the subquery run per row: uncorrelated, it would draw once for the whole chunk.
      cross join lateral (select n as k, random() as t, random() as f, random() as m, random() as d) r
      cross join lateral (select now() - interval '30 days' + ((n - ${from}::int) / 3) * (interval '30 days' * ${spacing}::float8) as at) s
      cross join lateral (select (case when r.d < 0.6 then 1 + r.d * 100 when r.d < 0.95 then 60 + r.d * 1000 else r.d * 20000 end)::int as ms) d
      cross join lateral (
        select case when r.m < 0.2 then (${MODELS as unknown as string[]}::text[])[1 + floor(r.m * 25)::int] end as model,
          case when r.m < 0.2 then round((0.0001 + r.m * 0.1)::numeric, 6) end as model_cost,
          case when r.m < 0.2 then (100 + r.m * 50000)::int end as tokens
      ) c`;
    if (to - from >= CHUNK) log(`  runs ${last.toLocaleString("en")} of ${to.toLocaleString("en")} (${((Date.now() - started) / 1000).toFixed(0)} s)`);
  }
  await sql`
    insert into workflows_private.execution_models (execution_id, model, workspace_id, started_at)
    select e.id, m.model, e.workspace_id, e.started_at
    from public.workflow_executions e cross join lateral jsonb_object_keys(e.cost -> 'models') m (model)
    where e.workspace_id = ${workspace.workspaceId} and e.id between ${generatedRunId(from)}::uuid and ${generatedRunId(to)}::uuid`;
  await sql`vacuum analyze public.workflow_executions`;
  await sql`vacuum analyze workflows_private.execution_models`;
  log(`  ${to.toLocaleString("en")} runs, per-model rows and statistics done (${((Date.now() - started) / 1000).toFixed(0)} s for this step)`);
}
