/** The seeded demo workspace, readied for benches that admit far more runs than any plan allows. */
import type { Sql } from "postgres";

/** The seeded "Hello API" workflow, whose workspace the benches run in. */
const HELLO_API = "f5000000-0000-4000-8000-000000000003";

/** The demo workspace's ids and its builder. */
export interface DemoWorkspace {
  workspace: string;
  account: string;
  builder: string;
}

/**
 * The demo workspace, its billing account moved to Enterprise (1,000 runs at once) with rate and
 * usage limits lifted, so a bench measures the path and not a refusal.
 */
export async function unlimitedDemoWorkspace(sql: Sql): Promise<DemoWorkspace> {
  const [demo] = await sql<DemoWorkspace[]>`
    select w.workspace_id as workspace, ws.billing_account_id as account, w.created_by as builder
    from public.workflows w join public.workspaces ws on ws.id = w.workspace_id where w.id = ${HELLO_API}`;
  await sql`update public.billing_accounts set plan = 'enterprise' where id = ${demo.account}`;
  await sql`insert into public.billing_account_overrides (billing_account_id, sync_per_minute, async_per_minute, usage_limit)
    values (${demo.account}, 10000000, 10000000, 1000000000) on conflict (billing_account_id) do update
    set sync_per_minute = excluded.sync_per_minute, async_per_minute = excluded.async_per_minute, usage_limit = excluded.usage_limit`;
  return demo;
}
