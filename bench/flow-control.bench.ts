/**
 * Concurrency slots under load (`npm run bench -- flow-control`; issue 32: "with 10,000 runs waiting
 * behind concurrency keys, admitting a new run and releasing a slot each cost ≤ 2 ms of SQL").
 *
 * The seeded Hello API workflow's account holds 10 sync runs (its limit, in this phase) and has
 * 10,000 async runs waiting for a slot, at five priorities. Timed in the database (clock_timestamp
 * around the call, so only SQL is counted), each sample undone afterwards so every one sees the same
 * 10,000 waiters:
 * - admission: admit_workflow_run of one more async run (authentication, rate limit, charge, record,
 *   and its filing among the waiters);
 * - release: finish_workflow_run of one of the 10 (its record and charge, then the slot given back
 *   and the highest-ranked waiter started: its queue message sent).
 * Then the same 10,000 waiters spread over 100 flow-control keys of limit 1 (issue 32 item 2), each
 * key held by one sync run: admission of a run whose key is full, and the finish of a key's holder.
 * Baselines, in the same run, on the same account and the same calls: admission while a slot is
 * free, and the finish of a run when nobody waits (the work the lifecycle did before flow control,
 * plus the counter's one row).
 */
import postgres from "postgres";
import { ascending, percentile, report, requiredEnv, verdict } from "./bench-support.ts";

const DEMO_KEY = "orb_local_only_demo_key_000000000000000000000000";
const HELLO_API = "f5000000-0000-4000-8000-000000000003";
const WAITERS = 10_000;
const HOLDERS = 10;
const SAMPLES = 300;
const WARM_UP = 30;
const GOAL_MS = 2;
/** Flow-control keys the waiters of the second phase are spread over, each of limit 1. */
const KEYS = 100;

/** p50 and p95 of `samples`, in ms. */
function spread(samples: number[]): { p50: number; p95: number } {
  const sorted = ascending(samples);
  return { p50: percentile(sorted, 0.5), p95: percentile(sorted, 0.95) };
}

/** Runs the flow-control bench and prints its figures. */
export async function run(): Promise<void> {
  // One connection: the timing function below lives in its pg_temp.
  const sql = postgres(requiredEnv("SUPABASE_DB_URL"), { max: 1, onnotice: () => {} });
  let account = "";
  const holders: string[] = [];
  const keyHolders: string[] = [];
  let flowControlSet = false;
  try {
    [{ account }] = await sql<{ account: string }[]>`
      select ws.billing_account_id as account from public.workflows w join public.workspaces ws on ws.id = w.workspace_id where w.id = ${HELLO_API}`;
    await sql`update public.billing_accounts set plan = 'enterprise' where id = ${account}`;
    await sql`insert into public.billing_account_overrides (billing_account_id, sync_per_minute, async_per_minute, usage_limit, concurrent_runs)
      values (${account}, 10000000, 10000000, 1000000000, 1000) on conflict (billing_account_id) do update
      set sync_per_minute = excluded.sync_per_minute, async_per_minute = excluded.async_per_minute, usage_limit = excluded.usage_limit,
        concurrent_runs = excluded.concurrent_runs`;
    // Runs `p_sql` in a subtransaction that is then undone; answers how long the call took in SQL.
    await sql`
      create function pg_temp.timed(p_sql text) returns double precision language plpgsql as $$
      declare
        v_started timestamptz;
        v_ms double precision;
      begin
        begin
          v_started := clock_timestamp();
          execute p_sql;
          v_ms := extract(epoch from clock_timestamp() - v_started) * 1000;
          raise exception using errcode = 'P0001', message = 'undo';
        exception when sqlstate 'P0001' then
          null;
        end;
        return v_ms;
      end;
      $$`;
    const admit = `select public.admit_workflow_run(p_workflow_id => '${HELLO_API}', p_trigger => 'api', p_mode => 'async', p_api_key => '${DEMO_KEY}')`;
    for (let index = 0; index < HOLDERS; index++) {
      const [{ id }] = await sql<{ id: string }[]>`select public.admit_workflow_run(p_workflow_id => ${HELLO_API}, p_trigger => 'api', p_mode => 'sync',
        p_api_key => ${DEMO_KEY}, p_lease_seconds => 3600) ->> 'executionId' as id`;
      holders.push(id);
    }
    const finish = (index: number) => `select public.finish_workflow_run('${holders[index % HOLDERS]}', 'completed')`;
    const measure = async (statement: (index: number) => string): Promise<number[]> => {
      // Unrecorded first calls: plans cached and pages read before either side is timed.
      for (let index = 0; index < WARM_UP; index++) await sql`select pg_temp.timed(${statement(index)})`;
      const samples: number[] = [];
      for (let index = 0; index < SAMPLES; index++) {
        const [{ ms }] = await sql<{ ms: number }[]>`select pg_temp.timed(${statement(index)}) as ms`;
        samples.push(ms);
      }
      return samples;
    };

    const freeAdmit = spread(await measure(() => admit));
    const idleRelease = spread(await measure(finish));

    const started = performance.now();
    await sql`update public.billing_account_overrides set concurrent_runs = ${HOLDERS} where billing_account_id = ${account}`;
    await sql.begin(async (tx) => {
      await tx`
        insert into public.workflow_executions (id, workspace_id, workflow_id, billing_account_id, deployment_id, deployment_version, trigger, mode, status,
          input, created_at, lease_expires_at, waiting_since)
        select ('f1c00000-0000-4000-8000-' || lpad(n::text, 12, '0'))::uuid, w.workspace_id, w.id, ${account}, d.id, d.version, 'api', 'async', 'queued',
          '{}'::jsonb, now() - make_interval(secs => n / 1000.0), now() + interval '24 hours', now()
        from public.workflows w join public.workflow_deployments d on d.workflow_id = w.id and d.is_active, generate_series(1, ${WAITERS}) n
        where w.id = ${HELLO_API}`;
      await tx`
        insert into workflows_private.run_waiters (execution_id, scope, scopes, limits, rank, enqueued_at)
        select ('f1c00000-0000-4000-8000-' || lpad(n::text, 12, '0'))::uuid, 'account:' || ${account}::text, array['account:' || ${account}::text], array[${HOLDERS}::integer],
          (n % 5) * 60 - extract(epoch from now() - make_interval(secs => n / 1000.0)), now()
        from generate_series(1, ${WAITERS}) n`;
    });
    await sql`analyze workflows_private.run_waiters`;
    console.log(`  seeded ${WAITERS.toLocaleString("en")} waiting runs behind ${HOLDERS} running ones in ${((performance.now() - started) / 1000).toFixed(1)} s`);

    const waitingAdmit = spread(await measure(() => admit));
    const busyRelease = spread(await measure(finish));
    const [{ waiting }] = await sql<{ waiting: number }[]>`select count(*)::int as waiting from workflows_private.run_waiters where scope = ${"account:" + account}`;
    if (waiting !== WAITERS) throw new Error(`expected ${WAITERS} waiters after the undone samples, found ${waiting}`);

    const admitMet = waitingAdmit.p95 <= GOAL_MS;
    const releaseMet = busyRelease.p95 <= GOAL_MS;
    console.log(`  ${verdict(admitMet)} admission behind ${WAITERS.toLocaleString("en")} waiters: p50 ${waitingAdmit.p50.toFixed(2)} ms, p95 ${waitingAdmit.p95.toFixed(2)} ms ` +
      `(a free slot: p50 ${freeAdmit.p50.toFixed(2)} ms, p95 ${freeAdmit.p95.toFixed(2)} ms; ×${(waitingAdmit.p95 / freeAdmit.p95).toFixed(2)} at p95)`);
    console.log(`  ${verdict(releaseMet)} release starting the next of ${WAITERS.toLocaleString("en")} waiters: p50 ${busyRelease.p50.toFixed(2)} ms, p95 ${busyRelease.p95.toFixed(2)} ms ` +
      `(nobody waiting: p50 ${idleRelease.p50.toFixed(2)} ms, p95 ${idleRelease.p95.toFixed(2)} ms; ×${(busyRelease.p95 / idleRelease.p95).toFixed(2)} at p95)`);
    // Phase 2 (issue 32 item 2): the 10,000 waiters spread over KEYS flow-control keys of limit 1,
    // each key held by one sync run; the account has room. Admission resolves the key from the input
    // and files the run behind its key; a release starts the next waiter of the holder's key.
    await sql`delete from public.workflow_executions where id in (select execution_id from workflows_private.run_waiters)`;
    await sql`update public.billing_account_overrides set concurrent_runs = 1000 where billing_account_id = ${account}`;
    await sql`update public.workflow_deployments set state = state || ${sql.json({ settings: { flowControl: { concurrency: { key: "<api.k>", limit: 1 } } } })}
      where workflow_id = ${HELLO_API} and is_active`;
    flowControlSet = true;
    for (let index = 0; index < KEYS; index++) {
      const [{ id }] = await sql<{ id: string }[]>`select public.admit_workflow_run(p_workflow_id => ${HELLO_API}, p_trigger => 'api', p_mode => 'sync',
        p_api_key => ${DEMO_KEY}, p_lease_seconds => 3600, p_input => ${sql.json({ k: String(index) })}) ->> 'executionId' as id`;
      keyHolders.push(id);
    }
    await sql.begin(async (tx) => {
      await tx`
        insert into public.workflow_executions (id, workspace_id, workflow_id, billing_account_id, deployment_id, deployment_version, trigger, mode, status,
          input, created_at, lease_expires_at, waiting_since, concurrency_key, concurrency_key_limit)
        select ('f1c00000-0000-4000-8000-' || lpad(n::text, 12, '0'))::uuid, w.workspace_id, w.id, ${account}, d.id, d.version, 'api', 'async', 'queued',
          jsonb_build_object('k', (n % ${KEYS})::text), now() - make_interval(secs => n / 1000.0), now() + interval '24 hours', now(), (n % ${KEYS})::text, 1
        from public.workflows w join public.workflow_deployments d on d.workflow_id = w.id and d.is_active, generate_series(1, ${WAITERS}) n
        where w.id = ${HELLO_API}`;
      await tx`
        insert into workflows_private.run_waiters (execution_id, scope, scopes, limits, rank, enqueued_at)
        select ('f1c00000-0000-4000-8000-' || lpad(n::text, 12, '0'))::uuid, ${"key:" + HELLO_API + ":"} || (n % ${KEYS})::text,
          array['account:' || ${account}::text, ${"key:" + HELLO_API + ":"} || (n % ${KEYS})::text], array[1000, 1],
          (n % 5) * 60 - extract(epoch from now() - make_interval(secs => n / 1000.0)), now()
        from generate_series(1, ${WAITERS}) n`;
    });
    await sql`analyze workflows_private.run_waiters`;
    const keyAdmit = spread(await measure((index) => `select public.admit_workflow_run(p_workflow_id => '${HELLO_API}', p_trigger => 'api', p_mode => 'async',
      p_api_key => '${DEMO_KEY}', p_input => '{"k": "${index % KEYS}"}')`));
    const keyRelease = spread(await measure((index) => `select public.finish_workflow_run('${keyHolders[index % KEYS]}', 'completed')`));
    const keyAdmitMet = keyAdmit.p95 <= GOAL_MS;
    const keyReleaseMet = keyRelease.p95 <= GOAL_MS;
    console.log(`  ${verdict(keyAdmitMet)} admission behind a key, ${WAITERS.toLocaleString("en")} waiters over ${KEYS} keys: p50 ${keyAdmit.p50.toFixed(2)} ms, p95 ${keyAdmit.p95.toFixed(2)} ms ` +
      `(a free slot, no flow control: p50 ${freeAdmit.p50.toFixed(2)} ms, p95 ${freeAdmit.p95.toFixed(2)} ms; ×${(keyAdmit.p95 / freeAdmit.p95).toFixed(2)} at p95)`);
    console.log(`  ${verdict(keyReleaseMet)} release starting the next waiter of its key: p50 ${keyRelease.p50.toFixed(2)} ms, p95 ${keyRelease.p95.toFixed(2)} ms ` +
      `(nobody waiting, no flow control: p50 ${idleRelease.p50.toFixed(2)} ms, p95 ${idleRelease.p95.toFixed(2)} ms; ×${(keyRelease.p95 / idleRelease.p95).toFixed(2)} at p95)`);

    report({
      bench: "flow-control", metric: "admit an async run in SQL, p95", scale: `${WAITERS.toLocaleString("en")} waiting`, value: waitingAdmit.p95, unit: "ms",
      higherIsBetter: false, baseline: { name: "admission with a free slot", value: freeAdmit.p95 }, goal: { text: "≤ 2 ms", met: admitMet },
    });
    report({
      bench: "flow-control", metric: "finish a run, releasing its slot to the next waiter, in SQL, p95", scale: `${WAITERS.toLocaleString("en")} waiting`,
      value: busyRelease.p95, unit: "ms", higherIsBetter: false, baseline: { name: "finish with nobody waiting", value: idleRelease.p95 },
      goal: { text: "≤ 2 ms", met: releaseMet },
    });
    report({
      bench: "flow-control", metric: "admit an async run behind its concurrency key in SQL, p95", scale: `${WAITERS.toLocaleString("en")} waiting over ${KEYS} keys`,
      value: keyAdmit.p95, unit: "ms", higherIsBetter: false, baseline: { name: "admission with a free slot, no flow control", value: freeAdmit.p95 },
      goal: { text: "≤ 2 ms", met: keyAdmitMet },
    });
    report({
      bench: "flow-control", metric: "finish a run, releasing its key's slot to the key's next waiter, in SQL, p95", scale: `${WAITERS.toLocaleString("en")} waiting over ${KEYS} keys`,
      value: keyRelease.p95, unit: "ms", higherIsBetter: false, baseline: { name: "finish with nobody waiting, no flow control", value: idleRelease.p95 },
      goal: { text: "≤ 2 ms", met: keyReleaseMet },
    });
  } finally {
    // Leave the account as other benches expect it: no waiters, no held slots, the plan's limit.
    if (account) {
      await sql`delete from public.workflow_executions where id in (select execution_id from workflows_private.run_waiters
        where scope = ${"account:" + account} or scope like ${"key:" + HELLO_API + ":%"})`;
      for (const id of [...holders, ...keyHolders]) await sql`select public.finish_workflow_run(${id}, 'completed')`;
      if (flowControlSet) await sql`update public.workflow_deployments set state = state - 'settings' where workflow_id = ${HELLO_API} and is_active`;
      await sql`update public.billing_account_overrides set concurrent_runs = null where billing_account_id = ${account}`;
    }
    await sql.end();
  }
}
