import { randomUUID } from "node:crypto";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { env } from "../helpers/env.ts";

const SESSIONS = 6;

/** One connection per session, each acting as the same signed-in editor. */
function session(): postgres.Sql {
  return postgres(env.dbUrl, { max: 1, onnotice: () => {} });
}

async function asEditor<T>(sql: postgres.Sql, userId: string, work: (tx: postgres.TransactionSql) => Promise<T>): Promise<T> {
  return (await sql.begin(async (tx) => {
    await tx`select set_config('role', 'authenticated', true), set_config('request.jwt.claims', ${JSON.stringify({ sub: userId, role: "authenticated" })}, true)`;
    return await work(tx);
  })) as T;
}

describe("deployments under concurrency", () => {
  const admin = session();
  const sessions = Array.from({ length: SESSIONS }, session);
  const userId = randomUUID();
  const workflowId = randomUUID();

  beforeAll(async () => {
    await admin`insert into auth.users (id, email, aud, role) values (${userId}, ${`${userId}@concurrency.test`}, 'authenticated', 'authenticated')`;
    const [workspace] = await asEditor(admin, userId, (tx) => tx<{ id: string }[]>`select id from public.create_workspace('Concurrency')`);
    const state = { blocks: { start: { id: "start", type: "manual_trigger", name: "Start" } } };
    await admin`insert into public.workflows (id, workspace_id, name, state) values (${workflowId}, ${workspace.id}, 'Raced', ${admin.json(state)})`;
  });

  afterAll(async () => {
    await Promise.all([admin, ...sessions].map((sql) => sql.end()));
  });

  it("numbers simultaneous deploys one after another and leaves exactly one active", async () => {
    const versions = await Promise.all(
      sessions.map((sql) =>
        asEditor(sql, userId, async (tx) => {
          const [row] = await tx<{ version: number }[]>`select version from public.deploy_workflow(${workflowId})`;
          // Hold the transaction open a moment so the others really queue behind its lock.
          await tx`select pg_sleep(0.02)`;
          return row.version;
        }),
      ),
    );
    expect([...versions].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6]);
    const active = await admin<{ version: number }[]>`select version from public.workflow_deployments where workflow_id = ${workflowId} and is_active`;
    expect(active).toEqual([{ version: 6 }]);
  });

  it("keeps one active snapshot when rollbacks and deploys race", async () => {
    await Promise.all(
      sessions.map((sql, index) =>
        asEditor(sql, userId, (tx) => (index % 2 === 0 ? tx`select public.activate_deployment(${workflowId}, ${index + 1})` : tx`select public.deploy_workflow(${workflowId})`)),
      ),
    );
    const [counts] = await admin<{ active: number; total: number }[]>`
      select count(*) filter (where is_active)::int as active, count(*)::int as total from public.workflow_deployments where workflow_id = ${workflowId}`;
    expect(counts).toEqual({ active: 1, total: 9 });
  });
});
