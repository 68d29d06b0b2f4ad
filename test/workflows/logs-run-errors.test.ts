/**
 * Failed runs say why, wherever a run is read from outside: the logs API's list and detail and the
 * completion webhook carry `error: {code, message, blockId, blockName}` (null unless the run failed),
 * and a failed run's `finalOutput` is null (docs/webhooks.md, "Why a run failed"). Runs go through
 * the execute endpoint as a client sends them: one refused before its first block (400
 * INVALID_INPUT, recorded as a failed run), one whose block throws, one that succeeds.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schemaViolations } from "../gamification/openapi.ts";
import { WebhookReceiver } from "../stand-ins/webhook-receiver.ts";
import { WorkflowBuilder } from "../../supabase/functions/_shared/workflows/state/state-builder.ts";
import { createWorkspace, type TestWorkspace } from "./factories.ts";
import { apiKey, deployedWorkflow, execute, setPlan, sql } from "./execute-api.ts";
import { getLogs, type LogEntry } from "./logs-helpers.ts";
import { subscribe } from "./webhooks-helpers.ts";


describe("why a failed run failed", () => {
  let workspace: TestWorkspace;
  let receiver: WebhookReceiver;
  let key: string;
  let typed: string;
  let failing: string;
  const runs: Record<"refused" | "failed" | "succeeded", string> = { refused: "", failed: "", succeeded: "" };

  const entryOf = async (executionId: string): Promise<LogEntry> => {
    const answer = await getLogs(key, "", { workspaceId: workspace.id, executionId, includeFinalOutput: "true" });
    expect(answer.status).toBe(200);
    expect(answer.body.data).toHaveLength(1);
    return answer.body.data![0] as LogEntry;
  };
  const detailOf = async (executionId: string): Promise<LogEntry> => {
    const answer = await getLogs(key, `/${executionId}`);
    expect(answer.status).toBe(200);
    return (answer.body as unknown as { data: LogEntry }).data;
  };
  const eventOf = async (path: string, executionId: string): Promise<Record<string, unknown>> => {
    const arrivals = await receiver.waitFor(path, (all) => all.some((arrival) => (arrival.json as { data: { executionId: string } }).data.executionId === executionId));
    const arrival = arrivals.find((one) => (one.json as { data: { executionId: string } }).data.executionId === executionId)!;
    expect(schemaViolations("WebhookEvent", arrival.json)).toEqual([]);
    return (arrival.json as { data: Record<string, unknown> }).data;
  };

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    workspace = await createWorkspace("Run errors");
    await setPlan(workspace.id, "enterprise", { sync_per_minute: 1000, async_per_minute: 1000 });
    const editor = workspace.members.editor;
    key = (await apiKey(editor)).key;
    typed = await deployedWorkflow(editor, workspace.id, "Typed", new WorkflowBuilder()
      .block("api", "api_trigger", { inputFormat: [{ name: "items", type: "json" }] }, { name: "API" })
      .block("count", "function", { code: "return <api.items>.length;" }, { name: "Count" })
      .chain("api", "count").build());
    failing = await deployedWorkflow(editor, workspace.id, "Failing", new WorkflowBuilder()
      .block("api", "api_trigger", {}, { name: "API" })
      .block("boom", "function", { code: "throw new Error('no stock');" }, { name: "Boom" })
      .chain("api", "boom").build());
    await subscribe(editor, typed, receiver.url("/typed"), { include_final_output: true });
    await subscribe(editor, failing, receiver.url("/failing"), { include_final_output: true });

    const refused = await execute(typed, key, { items: "not json" });
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe("INVALID_INPUT");
    runs.refused = refused.headers.get("x-execution-id")!;
    const failed = await execute(failing, key, { order: 7 });
    expect(failed.status).toBe(500);
    runs.failed = failed.body.executionId as string;
    const succeeded = await execute(typed, key, { items: "[1, 2]" });
    expect(succeeded.status).toBe(200);
    runs.succeeded = succeeded.body.executionId as string;
    expect(Object.values(runs).every((id) => /^[0-9a-f-]{36}$/.test(id))).toBe(true);
  });

  afterAll(async () => {
    await receiver.stop();
    await sql.end();
  });

  it("a run refused before its first block: the refusal's code and message, no block, no final output", async () => {
    const error = { code: "INVALID_INPUT", message: expect.stringContaining('"items"'), blockId: null, blockName: null };
    expect(await entryOf(runs.refused)).toMatchObject({ level: "error", error, executionData: { finalOutput: null } });
    expect(await detailOf(runs.refused)).toMatchObject({ level: "error", error, executionData: { finalOutput: null } });
    expect(await eventOf("/typed", runs.refused)).toMatchObject({ status: "error", level: "error", error, finalOutput: null });
  });

  it("a failed block: its code, message, id and name; the trigger's echo is not given as the final output", async () => {
    const error = { code: "BLOCK_FAILED", message: expect.stringContaining("no stock"), blockId: "boom", blockName: "Boom" };
    expect(await entryOf(runs.failed)).toMatchObject({ level: "error", error, executionData: { finalOutput: null } });
    const detail = await detailOf(runs.failed);
    expect(detail).toMatchObject({ level: "error", error, executionData: { finalOutput: null } });
    // What the blocks that completed produced is still there, in the trace.
    expect(JSON.stringify(detail.executionData?.traceSpans)).toContain('"order":7');
    expect(await eventOf("/failing", runs.failed)).toMatchObject({ status: "error", level: "error", error, finalOutput: null });
  });

  it("a run that succeeded: error null, its output as the final output", async () => {
    expect(await entryOf(runs.succeeded)).toMatchObject({ level: "info", error: null, executionData: { finalOutput: { result: 2 } } });
    expect(await detailOf(runs.succeeded)).toMatchObject({ error: null, executionData: { finalOutput: { result: 2 } } });
    expect(await eventOf("/typed", runs.succeeded)).toMatchObject({ status: "success", error: null, finalOutput: { result: 2 } });
  });
});
