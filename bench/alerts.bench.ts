/**
 * Alerts bench (`npm run bench -- alerts`; issue 32: "alert evaluation over 10,000 workflows
 * finishes in ≤ 5 s"). One workspace with 10,000 workflows, each with 10 runs in the last hour and
 * one rule (the five kinds in turn), and one evaluation of every rule at once, as the per-minute
 * job runs it. The baseline, in the same run, is one set-based aggregate over the same runs (every
 * workflow's failures, p95 and highest cost of the hour in a single GROUP BY): what reading the
 * runs costs without any rule machinery.
 */
import postgres from "postgres";
import { report, requiredEnv, verdict } from "./bench-support.ts";

const WORKFLOWS = 10_000;
const RUNS_PER_WORKFLOW = 10;
const EVALUATIONS = 3;
const GOAL_MS = 5_000;

/** Runs the alerts bench and prints its figures. */
export async function run(): Promise<void> {
  const sql = postgres(requiredEnv("SUPABASE_DB_URL"), { max: 1, onnotice: () => {} });
  try {
    const [{ workspace, account }] = await sql<{ workspace: string; account: string }[]>`
      select w.id as workspace, w.billing_account_id as account from public.workspaces w order by w.created_at limit 1`;
    const started = performance.now();
    await sql.begin(async (tx) => {
      await tx`
        insert into public.workflows (id, workspace_id, name, state)
        select ('a1e00000-0000-4000-8000-' || lpad(n::text, 12, '0'))::uuid, ${workspace}, 'Alerted ' || n, '{"blocks": {}, "edges": []}'
        from generate_series(1, ${WORKFLOWS}) n`;
      await tx`
        insert into public.workflow_executions (workspace_id, workflow_id, billing_account_id, trigger, mode, status, level, created_at, started_at, ended_at, duration_ms, cost_total)
        select ${workspace}, ('a1e00000-0000-4000-8000-' || lpad(n::text, 12, '0'))::uuid, ${account}, 'api', 'sync',
          case when (n + r) % 4 = 0 then 'failed' else 'completed' end::public.workflow_run_status,
          case when (n + r) % 4 = 0 then 'error' else 'info' end::public.workflow_log_level,
          t, t, t + interval '50 milliseconds', 50 + (n * r) % 900, 0.001 * (1 + r % 3)
        from generate_series(1, ${WORKFLOWS}) n, generate_series(1, ${RUNS_PER_WORKFLOW}) r,
          lateral (select now() - make_interval(mins => r * 5) as t) x`;
      await tx`
        insert into public.workflow_alert_rules (workflow_id, workspace_id, name, kind, threshold, window_minutes, min_runs, channel, email_to, created_at)
        select ('a1e00000-0000-4000-8000-' || lpad(n::text, 12, '0'))::uuid, ${workspace}, 'Rule ' || n,
          (array['consecutive_failures', 'failure_rate', 'p95_duration', 'cost_per_run', 'no_runs'])[1 + n % 5]::public.workflow_alert_kind,
          (array[3, 0.9, 5000, 1, null])[1 + n % 5], 60, 5, 'email', '{bench@alerts.test}', now() - interval '1 day'
        from generate_series(1, ${WORKFLOWS}) n`;
    });
    await sql`analyze public.workflow_executions`;
    await sql`analyze public.workflow_alert_rules`;
    console.log(`  seeded ${WORKFLOWS.toLocaleString("en")} workflows, ${(WORKFLOWS * RUNS_PER_WORKFLOW).toLocaleString("en")} runs and ${WORKFLOWS.toLocaleString("en")} rules in ${((performance.now() - started) / 1000).toFixed(1)} s`);

    const evaluations: number[] = [];
    for (let index = 0; index < EVALUATIONS; index++) {
      const before = performance.now();
      await sql`select workflows_private.evaluate_alert_rules(now() + make_interval(secs => ${index}))`;
      evaluations.push(performance.now() - before);
    }
    const baselines: number[] = [];
    for (let index = 0; index < EVALUATIONS; index++) {
      const before = performance.now();
      await sql`
        select e.workflow_id, count(*) filter (where e.status = 'failed'), percentile_cont(0.95) within group (order by e.duration_ms), max(e.cost_total)
        from public.workflow_executions e
        where e.workspace_id = ${workspace} and e.created_at > now() - interval '60 minutes' and e.status in ('completed', 'failed')
        group by e.workflow_id`;
      baselines.push(performance.now() - before);
    }
    const ours = Math.min(...evaluations);
    const baseline = Math.min(...baselines);
    const met = Math.max(...evaluations) <= GOAL_MS;
    console.log(`  ${verdict(met)} evaluating ${WORKFLOWS.toLocaleString("en")} rules (goal ≤ 5 s): ${evaluations.map((ms) => `${(ms / 1000).toFixed(2)} s`).join(", ")}; one GROUP BY over the same runs ${baselines.map((ms) => `${ms.toFixed(0)} ms`).join(", ")}`);
    report({
      bench: "alerts", metric: "evaluate every alert rule once (best of 3)", scale: `${WORKFLOWS.toLocaleString("en")} workflows`, value: ours, unit: "ms", higherIsBetter: false,
      baseline: { name: "one GROUP BY over the same runs", value: baseline }, goal: { text: "≤ 5 s", met },
    });
  } finally {
    await sql.end();
  }
}
