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
  let otherWorkflowId: string;

  const runs = (count: number, trigger: RunSpec["trigger"] = "webhook"): RunSpec[] => Array.from({ length: count }, () => ({ workflowId, trigger }));

  /** Every id in the workspace's log (of the given triggers) in the given order, straight from the table. */
  async function expected(order: "asc" | "desc", triggers = ["api", "webhook", "schedule", "manual", "chat"]): Promise<string[]> {
    const rows = order === "desc"
      ? await sql<{ id: string }[]>`select id from public.workflow_executions where workspace_id = ${workspace.id} and started_at is not null and trigger::text = any(${triggers}) order by started_at desc, id desc`
      : await sql<{ id: string }[]>`select id from public.workflow_executions where workspace_id = ${workspace.id} and started_at is not null and trigger::text = any(${triggers}) order by started_at, id`;
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
    [workflowId, otherWorkflowId] = await Promise.all([deployedWorkflow(workspace, "Busy"), deployedWorkflow(workspace, "Also busy")]);
    const created = await workspace.members.viewer.client.rpc("create_api_key", { p_name: "Pager" }).single<{ key: string }>();
    if (created.error) throw created.error;
    key = created.data.key;
    await recordRuns(sql, runs(3));
    await recordRuns(sql, runs(23), { sameStart: true });
    await recordRuns(sql, runs(3, "schedule"));
    // The other workflow's runs, some sharing start times with one another and across triggers.
    await recordRuns(sql, [
      ...Array.from({ length: 9 }, () => ({ workflowId: otherWorkflowId, trigger: "chat" as const })),
      ...Array.from({ length: 8 }, () => ({ workflowId: otherWorkflowId, trigger: "schedule" as const })),
    ], { sameStart: true });
    await recordRuns(sql, [{ workflowId: otherWorkflowId, trigger: "chat" }, { workflowId, trigger: "schedule" }]);
  });

  afterAll(async () => {
    await sql.end();
  });

  const TOTAL = 48;

  it("records the 23 runs of one transaction with one start time", async () => {
    const [{ starts }] = await sql<{ starts: number }[]>`
      select count(*)::int as starts from (select started_at from public.workflow_executions where workspace_id = ${workspace.id} group by started_at having count(*) = 23) s`;
    expect(starts).toBe(1);
  });

  it.each([1, 4, 7, 22, 23, 47, 48, 49, 100])("walks all 48 logs once, newest first then by id, %i a page", async (limit) => {
    const { ids, pages } = await walk({ limit: String(limit) });
    expect(ids).toEqual(await expected("desc"));
    expect(pages).toHaveLength(Math.max(1, Math.ceil(TOTAL / limit)));
    expect(pages.slice(0, -1).every((page) => page.body.data?.length === limit)).toBe(true);
    expect(pages.at(-1)?.body.nextCursor).toBeNull();
  });

  it.each([1, 5, 23, 48])("walks them oldest first with order=asc, %i a page", async (limit) => {
    const { ids } = await walk({ limit: String(limit), order: "asc" });
    expect(ids).toEqual(await expected("asc"));
  });

  it("walks a filtered log the same way: one trigger, several triggers, several workflows", async () => {
    expect((await walk({ limit: "2", triggers: "schedule" })).ids).toEqual(await expected("desc", ["schedule"]));
    expect((await walk({ limit: "3", triggers: "schedule,chat" })).ids).toEqual(await expected("desc", ["schedule", "chat"]));
    expect((await walk({ limit: "4", triggers: "chat,schedule", order: "asc" })).ids).toEqual(await expected("asc", ["chat", "schedule"]));
    expect((await walk({ limit: "5", workflowIds: `${workflowId},${otherWorkflowId}` })).ids).toEqual(await expected("desc"));
    expect((await walk({ limit: "6", workflowIds: `${otherWorkflowId},${workflowId}`, triggers: "webhook,chat", order: "asc" })).ids).toEqual(await expected("asc", ["webhook", "chat"]));
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
