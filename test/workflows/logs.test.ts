/**
 * The logs API through the gateway (GET /api/v1/logs, /logs/{id}, /logs/executions/{id}) with real
 * API keys, on runs recorded through the lifecycle functions: the spec's entry shapes, every
 * filter, detail modes and include flags, the limits object, who may read what, and bad input.
 * Paging and rate limits have files of their own (logs-paging, logs-rate-limit).
 */
import type { Sql } from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestUser, serviceClient } from "../helpers/clients.ts";
import { createWorkspace, type TestWorkspace } from "./factories.ts";
import { deployedWorkflow, getLogs, liftLimits, type LogEntry, type LogsResponse, openDatabase, recordRuns } from "./logs-helpers.ts";

/** A cursor as this API spells them (base64url JSON), for cursors the API never wrote. */
function cursorText(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString("base64url");
}

interface CreatedKey {
  id: string;
  key: string;
}

describe("the logs API", () => {
  let sql: Sql;
  let workspace: TestWorkspace;
  let alpha: string;
  let beta: string;
  let gamma: string;
  let folder: string;
  let subfolder: string;
  const keys: Record<"editor" | "viewer" | "workspace" | "stranger" | "otherWorkspace" | "revoked", string> = {
    editor: "", viewer: "", workspace: "", stranger: "", otherWorkspace: "", revoked: "",
  };
  const runs: Record<string, string> = {};

  const list = (query: Record<string, string> = {}, key = keys.editor) => getLogs(key, "", { workspaceId: workspace.id, ...query });
  const ids = (response: LogsResponse) => (response.body.data ?? []).map((entry) => entry.id);

  beforeAll(async () => {
    sql = openDatabase();
    workspace = await createWorkspace("Logs");
    await liftLimits(workspace.id, { logsPerMinute: 100_000 });
    const editor = workspace.members.editor.client;
    const top = await editor.from("folders").insert({ workspace_id: workspace.id, name: "Operations" }).select("id").single<{ id: string }>();
    if (top.error) throw top.error;
    folder = top.data.id;
    const nested = await editor.from("folders").insert({ workspace_id: workspace.id, name: "Night shift", parent_id: folder }).select("id").single<{ id: string }>();
    if (nested.error) throw nested.error;
    subfolder = nested.data.id;
    [alpha, beta, gamma] = await Promise.all([
      deployedWorkflow(workspace, "Alpha"),
      deployedWorkflow(workspace, "Beta", folder),
      deployedWorkflow(workspace, "Gamma", subfolder),
    ]);

    const create = async (client: typeof editor, name: string, workspaceId?: string) => {
      const { data, error } = await client.rpc("create_api_key", { p_name: name, p_workspace_id: workspaceId }).single<CreatedKey>();
      if (error) throw error;
      return data;
    };
    keys.editor = (await create(editor, "Editor")).key;
    keys.viewer = (await create(workspace.members.viewer.client, "Viewer")).key;
    keys.workspace = (await create(workspace.members.admin.client, "Shared", workspace.id)).key;
    const revoked = await create(editor, "Old laptop");
    keys.revoked = revoked.key;
    await editor.rpc("revoke_api_key", { p_id: revoked.id });
    const stranger = await createTestUser();
    keys.stranger = (await create(stranger.client, "Stranger")).key;
    const other = await createWorkspace("Someone else's");
    keys.otherWorkspace = (await create(other.owner.client, "Theirs", other.id)).key;

    const spans = [{ blockId: "done", blockName: "Done", status: "success", durationMs: 1 }];
    const [webhook, failedApi, schedule, chat, manual, cancelled] = await recordRuns(sql, [
      { workflowId: alpha, trigger: "webhook", durationMs: 5 },
      { workflowId: alpha, trigger: "api", apiKey: keys.editor, status: "failed", durationMs: 50 },
      { workflowId: beta, trigger: "schedule", durationMs: 200, models: [{ model: "gpt-4o", promptTokens: 1000, completionTokens: 500 }] },
      { workflowId: gamma, trigger: "chat", durationMs: 1000, models: [{ model: "claude-sonnet-4-5", promptTokens: 200, completionTokens: 100 }, { model: "gpt-4o-mini", promptTokens: 10, completionTokens: 10, ownKey: true }] },
      { workflowId: alpha, trigger: "manual", userId: workspace.members.editor.id, durationMs: 20, output: { answer: 42 }, traceSpans: spans, files: [{ id: "f1", name: "report.pdf" }] },
      { workflowId: beta, trigger: "webhook", status: "cancelled", durationMs: 7 },
    ]);
    Object.assign(runs, { webhook, failedApi, schedule, chat, manual, cancelled });
    // A run still queued has not started: it is no log yet. Its message is hidden for an hour, so
    // the async worker does not start it while these tests read.
    await sql.begin(async (tx) => {
      await tx`select set_config('role', 'service_role', true), set_config('request.jwt.claims', '{"role": "service_role"}', true)`;
      const [{ answer }] = await tx<{ answer: { executionId: string } }[]>`select public.admit_workflow_run(${alpha}::uuid, 'webhook', 'async') as answer`;
      await tx`reset role`;
      await tx`select pgmq.set_vt('workflow_runs', queue_message_id, 3600) from public.workflow_executions where id = ${answer.executionId}::uuid`;
    });
  });

  afterAll(async () => {
    await sql.end();
  });

  describe("GET /api/v1/logs", () => {
    it("lists the spec's log entries of started runs, newest first, with the limits object and the logs API's rate headers", async () => {
      const response = await list();
      expect(response.status).toBe(200);
      expect(ids(response)).toEqual([runs.cancelled, runs.manual, runs.chat, runs.schedule, runs.failedApi, runs.webhook]);
      const manual = response.body.data?.find((entry) => entry.id === runs.manual);
      expect(manual).toEqual({
        id: runs.manual, executionId: runs.manual, workflowId: alpha, level: "info", trigger: "manual",
        startedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+\+00:00$/), endedAt: expect.any(String), totalDurationMs: 20,
        cost: { total: 0.001 }, files: [{ id: "f1", name: "report.pdf" }], error: null,
      });
      expect(response.body.data?.find((entry) => entry.id === runs.failedApi)).toMatchObject({ level: "error", trigger: "api", totalDurationMs: 50 });
      expect(response.body.nextCursor).toBeNull();

      const usage = await serviceClient().rpc("workflow_usage_limits", { p_api_key: keys.editor });
      const { rateLimit, usage: period } = (usage.data as { body: { rateLimit: Record<string, Record<string, unknown>>; usage: Record<string, unknown> } }).body;
      expect(response.body.limits).toEqual({
        workflowExecutionRateLimit: {
          sync: { limit: 100_000, remaining: rateLimit.sync.remaining, resetAt: expect.any(String) },
          async: { limit: 100_000, remaining: rateLimit.async.remaining, resetAt: expect.any(String) },
        },
        usage: { currentPeriodCost: period.currentPeriodCost, limit: 100_000, plan: "free", isExceeded: false },
      });
      expect(response.headers.get("x-ratelimit-limit")).toBe("100000");
      expect(Number(response.headers.get("x-ratelimit-remaining"))).toBeGreaterThan(99_000);
      expect(response.headers.get("x-ratelimit-reset")).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    });

    it("filters by workflow, by folder with its subfolders, by trigger, by level and by execution", async () => {
      expect(ids(await list({ workflowIds: alpha }))).toEqual([runs.manual, runs.failedApi, runs.webhook]);
      expect(ids(await list({ workflowIds: `${beta},${gamma}` }))).toEqual([runs.cancelled, runs.chat, runs.schedule]);
      expect(ids(await list({ folderIds: folder }))).toEqual([runs.cancelled, runs.chat, runs.schedule]);
      expect(ids(await list({ folderIds: subfolder }))).toEqual([runs.chat]);
      expect(ids(await list({ triggers: "webhook,chat" }))).toEqual([runs.cancelled, runs.chat, runs.webhook]);
      expect(ids(await list({ triggers: "schedule" }))).toEqual([runs.schedule]);
      expect(ids(await list({ level: "error" }))).toEqual([runs.failedApi]);
      expect(ids(await list({ level: "info" }))).toEqual([runs.cancelled, runs.manual, runs.chat, runs.schedule, runs.webhook]);
      expect(ids(await list({ executionId: runs.chat }))).toEqual([runs.chat]);
      expect(ids(await list({ executionId: "00000000-0000-4000-8000-000000000000" }))).toEqual([]);
      expect(ids(await list({ workflowIds: alpha, folderIds: folder }))).toEqual([]);
    });

    it("filters by start time (both ends inclusive), duration and cost of finished runs, and a model the run used", async () => {
      const all = (await list()).body.data ?? [];
      const startOf = (id: string) => all.find((entry) => entry.id === id)?.startedAt ?? "";
      expect(ids(await list({ startDate: new Date(startOf(runs.chat)).toISOString() }))).toContain(runs.chat);
      const window = await list({ startDate: startOf(runs.schedule), endDate: startOf(runs.manual) });
      expect(ids(window)).toEqual([runs.manual, runs.chat, runs.schedule]);
      expect(ids(await list({ startDate: "2100-01-01T00:00:00+02:00" }))).toEqual([]);
      expect(ids(await list({ minDurationMs: "50" }))).toEqual([runs.chat, runs.schedule, runs.failedApi]);
      expect(ids(await list({ minDurationMs: "20", maxDurationMs: "200" }))).toEqual([runs.manual, runs.schedule, runs.failedApi]);
      // gpt-4o: (1000 × $2.50 + 500 × $10) per million, × 2.5 for the hosted key, plus the base $0.001: $0.01975.
      expect(ids(await list({ minCost: "0.01" }))).toEqual([runs.schedule]);
      expect(ids(await list({ maxCost: "0.001" }))).toEqual([runs.cancelled, runs.manual, runs.failedApi, runs.webhook]);
      expect(ids(await list({ minCost: "0.0011", maxCost: "0.01" }))).toEqual([runs.chat]);
      expect(ids(await list({ model: "gpt-4o" }))).toEqual([runs.schedule]);
      expect(ids(await list({ model: "gpt-4o-mini" }))).toEqual([runs.chat]);
      expect(ids(await list({ model: "gpt-4o-mini", triggers: "api" }))).toEqual([]);
      expect(ids(await list({ model: "no-such-model" }))).toEqual([]);
      expect(ids(await list({ model: "gpt-4o", order: "asc", startDate: startOf(runs.webhook) }))).toEqual([runs.schedule]);
    });

    it("adds the workflow and the whole cost in full details, and trace spans or the final output only when asked", async () => {
      const basic = (await list({ executionId: runs.manual, includeTraceSpans: "false", includeFinalOutput: "false" })).body.data?.[0];
      expect(Object.keys(basic ?? {}).sort()).toEqual(["cost", "endedAt", "error", "executionId", "files", "id", "level", "startedAt", "totalDurationMs", "trigger", "workflowId"]);
      const full = (await list({ executionId: runs.schedule, details: "full" })).body.data?.[0];
      expect(full?.workflow).toEqual({ id: beta, name: "Beta", description: "" });
      expect(full?.cost).toMatchObject({ total: 0.01975, base: 0.001, tokens: { prompt: 1000, completion: 500, total: 1500 }, models: { "gpt-4o": { total: 0.01875, priced: true } } });
      expect(full?.executionData).toBeUndefined();
      const spans = (await list({ executionId: runs.manual, includeTraceSpans: "true" })).body.data?.[0];
      expect(spans?.executionData).toEqual({ traceSpans: [{ blockId: "done", blockName: "Done", status: "success", durationMs: 1 }] });
      const output = (await list({ executionId: runs.manual, includeFinalOutput: "1", includeTraceSpans: "0" })).body.data?.[0];
      expect(output?.executionData).toEqual({ finalOutput: { answer: 42 } });
      expect(output?.workflow).toBeUndefined();
    });

    it("reads with the viewer's key and the workspace's own key; refuses other workspaces' keys with 403 and bad keys with 401", async () => {
      expect(ids(await list({}, keys.viewer))).toHaveLength(6);
      expect(ids(await list({}, keys.workspace))).toHaveLength(6);
      for (const key of [keys.stranger, keys.otherWorkspace]) {
        const refused = await list({}, key);
        expect(refused.status).toBe(403);
        expect(refused.body).toEqual({ error: `This API key may not read the logs of workspace ${workspace.id}`, code: "FORBIDDEN" });
      }
      const unknownWorkspace = await list({ workspaceId: "00000000-0000-4000-8000-000000000000" });
      expect(unknownWorkspace.status).toBe(403);
      expect((await list({}, keys.revoked)).body).toEqual({ error: "Invalid API key: it does not exist or was revoked", code: "UNAUTHORIZED" });
      expect((await list({}, "orb_not_a_key_at_all_0000000000000000000000")).status).toBe(401);
      const missing = await getLogs(null, "", { workspaceId: workspace.id });
      expect(missing.status).toBe(401);
      expect(missing.body).toEqual({ error: "API key required: send it in the X-API-Key header", code: "UNAUTHORIZED" });
    });

    it("answers bad parameters with 400 {error, code} naming the parameter", async () => {
      const cases: [Record<string, string>, string][] = [
        [{ workspaceId: "" }, "workspaceId"],
        [{ workspaceId: "not-a-uuid" }, "workspaceId"],
        [{ workflowIds: `${alpha},nope` }, "workflowIds.1"],
        [{ workflowIds: "" }, "workflowIds.0"],
        [{ triggers: "api,email" }, "triggers.1"],
        [{ level: "warning" }, "level"],
        [{ startDate: "yesterday" }, "startDate"],
        [{ endDate: "2026-02-30T00:00:00Z" }, "endDate"],
        [{ startDate: "2026-01-01" }, "startDate"],
        [{ minDurationMs: "-1" }, "minDurationMs"],
        [{ maxDurationMs: "1.5" }, "maxDurationMs"],
        [{ maxDurationMs: "99999999999" }, "maxDurationMs"],
        [{ minCost: "abc" }, "minCost"],
        [{ maxCost: "1e3" }, "maxCost"],
        [{ limit: "0" }, "limit"],
        [{ limit: "1001" }, "limit"],
        [{ limit: "ten" }, "limit"],
        [{ order: "newest" }, "order"],
        [{ details: "everything" }, "details"],
        [{ includeTraceSpans: "yes" }, "includeTraceSpans"],
        [{ includeFinalOutput: "" }, "includeFinalOutput"],
        [{ model: "" }, "model"],
        [{ cursor: "not a cursor" }, "cursor"],
        [{ cursor: cursorText({ t: "2026-11-23T10:00:00.000000Z", i: "x", o: "desc" }) }, "cursor"],
        [{ cursor: cursorText({ t: "2026-13-23T10:00:00.000000Z", i: alpha, o: "desc" }) }, "cursor"],
        [{ cursor: cursorText({ t: "2026-11-23T10:00:00.000000Z", i: alpha, o: "desc", extra: 1 }) }, "cursor"],
        [{ cursor: cursorText({ t: "2026-11-23T10:00:00.000000Z", i: alpha, o: "asc" }) }, "cursor"],
        [{ workspace: workspace.id }, ""],
      ];
      for (const [query, path] of cases) {
        const response = await list(query);
        expect(response.status, JSON.stringify(query)).toBe(400);
        expect(response.body.code).toBe("INVALID_QUERY");
        expect(response.body.error).toMatch(/^The request query is not valid: /);
        expect((response.body.issues as { path: string }[]).map((issue) => issue.path), JSON.stringify(query)).toContain(path);
      }
      const noWorkspace = await getLogs(keys.editor, "");
      expect(noWorkspace.status).toBe(400);
      expect(noWorkspace.body.error).toBe("The request query is not valid: workspaceId is required");
    });
  });

  describe("GET /api/v1/logs/{id}", () => {
    it("answers the log in full: workflow, execution data, whole cost, and the limits object", async () => {
      const response = await getLogs(keys.viewer, `/${runs.manual}`);
      expect(response.status).toBe(200);
      expect(response.headers.get("x-ratelimit-limit")).toBe("100000");
      const { data, limits } = response.body as unknown as { data: LogEntry; limits: Record<string, unknown> };
      expect(data).toMatchObject({
        id: runs.manual, executionId: runs.manual, workflowId: alpha, level: "info", trigger: "manual", totalDurationMs: 20,
        workflow: { id: alpha, name: "Alpha", description: "" },
        executionData: { traceSpans: [{ blockId: "done", blockName: "Done", status: "success", durationMs: 1 }], finalOutput: { answer: 42 } },
        cost: { total: 0.001, base: 0.001, tokens: { prompt: 0, completion: 0, total: 0 }, models: {} },
        files: [{ id: "f1", name: "report.pdf" }],
      });
      expect(Object.keys(limits).sort()).toEqual(["usage", "workflowExecutionRateLimit"]);
      const failed = (await getLogs(keys.editor, `/${runs.failedApi}`)).body.data as unknown as LogEntry;
      // A failed run's output is not an answer: finalOutput is null, and error says why.
      expect(failed).toMatchObject({ level: "error", executionData: { finalOutput: null },
        error: { code: "BLOCK_FAILED", message: "It broke", blockId: "done", blockName: "Done" } });
    });

    it("answers 404 for a log that does not exist, that the key may not read, or an id that is no UUID", async () => {
      for (const [key, path] of [[keys.editor, "/00000000-0000-4000-8000-000000000000"], [keys.otherWorkspace, `/${runs.manual}`], [keys.stranger, `/${runs.manual}`], [keys.editor, "/42"]]) {
        const response = await getLogs(key, path);
        expect(response.status, path).toBe(404);
        expect(response.body.code).toBe("NOT_FOUND");
      }
      expect((await getLogs(keys.revoked, `/${runs.manual}`)).status).toBe(401);
    });
  });

  describe("GET /api/v1/logs/executions/{executionId}", () => {
    it("answers the workflow state the run executed and its metadata, top-level", async () => {
      const response = await getLogs(keys.workspace, `/executions/${runs.schedule}`);
      expect(response.status).toBe(200);
      const body = response.body as Record<string, unknown> & { workflowState: Record<string, unknown> };
      expect(Object.keys(body).sort()).toEqual(["executionId", "executionMetadata", "limits", "workflowId", "workflowState"]);
      expect(body).toMatchObject({
        executionId: runs.schedule, workflowId: beta,
        executionMetadata: { trigger: "schedule", startedAt: expect.any(String), endedAt: expect.any(String), totalDurationMs: 200, cost: { total: 0.01975 } },
      });
      expect(Object.keys(body.workflowState.blocks as object).sort()).toEqual(["done", "hook"]);
      expect(body.workflowState).toMatchObject({ edges: [{ source: "hook", target: "done" }], loops: {}, parallels: {} });
    });

    it("answers a manual run with the draft it ran, not a later one", async () => {
      const editor = workspace.members.editor.client;
      await editor.from("workflows").update({ name: "Alpha renamed", description: "Later" }).eq("id", alpha);
      const response = await getLogs(keys.editor, `/executions/${runs.manual}`);
      expect(response.status).toBe(200);
      expect((response.body.workflowState as { blocks: Record<string, unknown> }).blocks).toHaveProperty("hook");
      const detail = await getLogs(keys.editor, `/${runs.manual}`);
      expect((detail.body.data as unknown as LogEntry).workflow).toEqual({ id: alpha, name: "Alpha renamed", description: "Later" });
    });

    it("answers 404 for executions the key may not read or that do not exist", async () => {
      expect((await getLogs(keys.otherWorkspace, `/executions/${runs.schedule}`)).status).toBe(404);
      expect((await getLogs(keys.editor, "/executions/00000000-0000-4000-8000-000000000000")).body).toEqual({
        error: "Execution 00000000-0000-4000-8000-000000000000 not found", code: "NOT_FOUND",
      });
      expect((await getLogs(keys.editor, "/executions/nope")).status).toBe(404);
      expect((await getLogs(keys.editor, "/executions")).status).toBe(404);
    });
  });
});
