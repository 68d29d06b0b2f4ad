/**
 * What the logs and webhook benches start from, made in SQL as the database would hold it after
 * normal use: a user owning a workspace with folders and deployed workflows, a workspace API key,
 * and an account whose limits a bench does not reach (the measured paths still take their tokens).
 */
import type { Sql } from "postgres";

/** A bench workspace. */
export interface BenchWorkspace {
  workspaceId: string;
  accountId: string;
  ownerId: string;
  /** A workspace API key (its text). */
  apiKey: string;
  workflowIds: string[];
  /** Three folders, the second inside the first; workflows 0–4 sit in the first, 5–9 in the second. */
  folderIds: string[];
}

const STATE = {
  blocks: {
    hook: { id: "hook", type: "generic_webhook", name: "Hook", config: {} },
    done: { id: "done", type: "response", name: "Done", config: { body: "ok" } },
  },
  edges: [{ id: "e1", source: "hook", target: "done" }],
};

/** Creates the workspace `name` with `workflows` deployed workflows, owned by user `ownerId`. */
export async function createBenchWorkspace(sql: Sql, name: string, ownerId: string, workflows: number): Promise<BenchWorkspace> {
  await sql`insert into auth.users (id, email, aud, role) values (${ownerId}, ${`${ownerId}@bench.orbita.test`}, 'authenticated', 'authenticated') on conflict do nothing`;
  return (await sql.begin(async (tx) => {
    await tx`select set_config('request.jwt.claims', ${JSON.stringify({ sub: ownerId, role: "authenticated" })}, true)`;
    const [{ id: workspaceId, billing_account_id: accountId }] = await tx<{ id: string; billing_account_id: string }[]>`select id, billing_account_id from public.create_workspace(${name})`;
    const [top] = await tx<{ id: string }[]>`insert into public.folders (workspace_id, name) values (${workspaceId}, 'Operations') returning id`;
    const [nested] = await tx<{ id: string }[]>`insert into public.folders (workspace_id, name, parent_id) values (${workspaceId}, 'Night shift', ${top.id}) returning id`;
    const [other] = await tx<{ id: string }[]>`insert into public.folders (workspace_id, name) values (${workspaceId}, 'Sales') returning id`;
    const folderIds = [top.id, nested.id, other.id];
    const rows = await tx<{ id: string }[]>`
      insert into public.workflows (workspace_id, name, state, folder_id)
      select ${workspaceId}, 'Workflow ' || n, ${tx.json(STATE)},
        case when n <= 5 then ${top.id}::uuid when n <= 10 then ${nested.id}::uuid when n <= 15 then ${other.id}::uuid end
      from generate_series(1, ${workflows}) n
      returning id`;
    const workflowIds = rows.map((row) => row.id);
    for (const id of workflowIds) await tx`select public.deploy_workflow(${id})`;
    const [{ key }] = await tx<{ key: string }[]>`select key from public.create_api_key('Bench', ${workspaceId})`;
    // The logs bench's runs span 30 days: on Team (90 days' retention) the expiry job leaves them be.
    await tx`update public.billing_accounts set plan = 'team' where id = ${accountId}`;
    await tx`insert into public.billing_account_overrides (billing_account_id, sync_per_minute, async_per_minute, logs_per_minute, usage_limit)
      values (${accountId}, 1000000, 1000000, 1000000, 1000000000)`;
    return { workspaceId, accountId, ownerId, apiKey: key, workflowIds, folderIds };
  })) as BenchWorkspace;
}
