/**
 * Keyset paging of GET /api/v1/logs through the gateway: every page size walks the whole log once,
 * in order, with many runs sharing one start time, in both orders, and while runs keep arriving.
 */
import type { Sql } from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWorkspace, type TestWorkspace } from "./factories.ts";
import { deployedWorkflow, getLogs, liftLimits, type LogsResponse, openDatabase, recordRuns, type RunSpec } from "./logs-helpers.ts";

describe("paging the logs", () => {
  let sql: Sql;
  let workspace: TestWorkspace;
  let key: string;
  let workflowId: string;

  const runs = (count: number, trigger: RunSpec["trigger"] = "webhook"): RunSpec[] => Array.from({ length: count }, () => ({ workflowId, trigger }));

  /** Every id in the workspace's log in the given order, straight from the table. */
  async function expected(order: "asc" | "desc"): Promise<string[]> {
    const rows = order === "desc"
      ? await sql<{ id: string }[]>`select id from public.workflow_executions where workspace_id = ${workspace.id} and started_at is not null order by started_at desc, id desc`
      : await sql<{ id: string }[]>`select id from public.workflow_executions where workspace_id = ${workspace.id} and started_at is not null order by started_at, id`;
    return rows.map((row) => row.id);
  }

  /** Walks every page; `between` runs after each page but the last. */
  async function walk(query: Record<string, string>, between?: (page: number) => Promise<void>): Promise<{ ids: string[]; pages: LogsResponse[] }> {
    const ids: string[] = [];
    const pages: LogsResponse[] = [];
    let cursor: string | null | undefined;
    do {
      const page = await getLogs(key, "", { workspaceId: workspace.id, ...query, ...(cursor ? { cursor } : {}) });
      expect(page.status, JSON.stringify(page.body)).toBe(200);
      pages.push(page);
      ids.push(...(page.body.data ?? []).map((entry) => entry.id));
      cursor = page.body.nextCursor;
      if (cursor && between) await between(pages.length);
    } while (cursor);
    return { ids, pages };
  }

  beforeAll(async () => {
    sql = openDatabase();
    workspace = await createWorkspace("Paging");
    await liftLimits(workspace.id, { logsPerMinute: 100_000 });
    workflowId = await deployedWorkflow(workspace, "Busy");
    const created = await workspace.members.viewer.client.rpc("create_api_key", { p_name: "Pager" }).single<{ key: string }>();
    if (created.error) throw created.error;
    key = created.data.key;
    await recordRuns(sql, runs(3));
    await recordRuns(sql, runs(23), { sameStart: true });
    await recordRuns(sql, runs(3, "schedule"));
  });

  afterAll(async () => {
    await sql.end();
  });

  it("records the 23 runs of one transaction with one start time", async () => {
    const [{ starts }] = await sql<{ starts: number }[]>`
      select count(*)::int as starts from (select started_at from public.workflow_executions where workspace_id = ${workspace.id} group by started_at having count(*) = 23) s`;
    expect(starts).toBe(1);
  });

  it.each([1, 4, 7, 22, 23, 28, 29, 30, 100])("walks all 29 logs once, newest first then by id, %i a page", async (limit) => {
    const { ids, pages } = await walk({ limit: String(limit) });
    expect(ids).toEqual(await expected("desc"));
    expect(pages).toHaveLength(Math.max(1, Math.ceil(29 / limit)));
    expect(pages.slice(0, -1).every((page) => page.body.data?.length === limit)).toBe(true);
    expect(pages.at(-1)?.body.nextCursor).toBeNull();
  });

  it.each([1, 5, 23, 29])("walks them oldest first with order=asc, %i a page", async (limit) => {
    const { ids } = await walk({ limit: String(limit), order: "asc" });
    expect(ids).toEqual(await expected("asc"));
  });

  it("walks a filtered log the same way", async () => {
    const { ids } = await walk({ limit: "2", triggers: "schedule" });
    expect(ids).toEqual((await expected("desc")).slice(0, 3));
  });

  it("neither skips nor repeats a row while runs keep arriving: new runs are above a newest-first walk and at the end of an oldest-first one", async () => {
    const before = await expected("desc");
    const added: string[] = [];
    const newestFirst = await walk({ limit: "5" }, async (page) => {
      added.push(...(await recordRuns(sql, runs(page % 2 === 0 ? 3 : 1), { sameStart: page % 2 === 0 })));
    });
    expect(newestFirst.ids).toEqual(before);
    expect(added.length).toBeGreaterThan(5);

    const snapshot = await expected("asc");
    let arrivals = 0;
    const oldestFirst = await walk({ limit: "6", order: "asc" }, async () => {
      if (arrivals++ < 4) await recordRuns(sql, runs(2), { sameStart: true });
    });
    const after = await expected("asc");
    expect(after.slice(0, snapshot.length)).toEqual(snapshot);
    expect(oldestFirst.ids).toEqual(after);
    expect(new Set(oldestFirst.ids).size).toBe(oldestFirst.ids.length);
  });
});
