import { beforeAll, describe, expect, it } from "vitest";
import { WorkflowBuilder } from "../../supabase/functions/_shared/workflows/state/state-builder.ts";
import { anonClient, serviceClient } from "../helpers/clients.ts";
import { env } from "../helpers/env.ts";
import { createWorkflow, createWorkspace, type TestWorkspace } from "./factories.ts";
import { liftLimits } from "./logs-helpers.ts";

/**
 * Every control-flow block in one workflow: an API trigger with an Input Format, a Condition, a
 * Router, a forEach loop, a parallel, Function, Variables, Wait and Response blocks.
 */
function everyBlock() {
  return new WorkflowBuilder()
    .block("api", "api_trigger", { inputFormat: [{ name: "orders", type: "json", value: [{ id: 1, total: 40 }, { id: 2, total: 250 }] }, { name: "tier", type: "string", value: "gold" }] }, { name: "API" })
    .block("any", "condition", { conditions: [{ id: "some", kind: "if", expression: "<api.orders>.length > 0" }, { id: "none", kind: "else" }] }, { name: "Any Orders" })
    .loop("each", { nodes: ["price"], loopType: "forEach", forEachItems: "<api.orders>" }, { name: "Each Order" })
    .block("price", "function", { code: "return { id: <loop.item>.id, total: <loop.item>.total * {{TAX_RATE}} };" }, { name: "Price" })
    .parallel("notify", { nodes: ["pause"], parallelType: "count", count: 3 }, { name: "Notify" })
    .block("pause", "wait", { amount: 10, unit: "ms" }, { name: "Pause" })
    .block("tier", "router", { value: "<api.tier>", routes: [{ id: "gold", operator: "equals", operand: "gold" }, { id: "other", operator: "default" }] }, { name: "Tier" })
    .block("discount", "variables", { assignments: [{ name: "discount", value: 0.1 }] }, { name: "Discount" })
    .block("none", "variables", { assignments: [{ name: "discount", value: 0 }] }, { name: "No Discount" })
    .block("answer", "response", { status: 201, headers: { "X-Orders": "<eachorder.iterations>" }, body: { priced: "<eachorder.results>", discount: "<variable.discount>", notified: "<notify.branches>" } }, { name: "Answer" })
    .block("empty", "response", { status: 204 }, { name: "Empty" })
    .edge("api", "any")
    .edge("any", "each", "condition-some")
    .edge("any", "empty", "condition-none")
    .edge("each", "price", "loop-start")
    .edge("each", "notify")
    .edge("notify", "pause", "parallel-start")
    .edge("notify", "tier")
    .edge("tier", "discount", "router-gold")
    .edge("tier", "none", "router-other")
    .edge("discount", "answer")
    .edge("none", "answer")
    .build();
}

describe("manual runs of the draft, from a signed-in session", () => {
  let workspace: TestWorkspace;
  let workflowId: string;

  beforeAll(async () => {
    workspace = await createWorkspace("Manual runs");
    // Manual runs spend the plan's synchronous rate limit (5 a minute on Free); this suite runs more.
    await liftLimits(workspace.id);
    workflowId = await createWorkflow(workspace.members.editor, workspace.id, "Every block", everyBlock());
    const { error } = await workspace.owner.client.rpc("set_environment_variable", { p_workspace_id: workspace.id, p_name: "TAX_RATE", p_value: "1.5" });
    if (error) throw error;
  });

  it("runs every control-flow block with the value column and the workspace's variables", async () => {
    const { data, error } = await workspace.members.editor.client.functions.invoke(`workflow-run/${workflowId}`, { body: {} });
    expect(error).toBeNull();
    expect(data).toMatchObject({
      success: true,
      response: {
        status: 201,
        headers: { "X-Orders": "2" },
        body: {
          priced: [
            { result: { id: 1, total: 60 }, stdout: "" },
            { result: { id: 2, total: 375 }, stdout: "" },
          ],
          discount: 0.1,
          notified: 3,
        },
      },
      metadata: { trigger: "manual" },
    });
    expect(data.traceSpans.map((span: { name: string }) => span.name)).toEqual(["API", "Any Orders", "Each Order", "Notify", "Tier", "Discount", "Answer"]);
    expect(data.context.decisions).toEqual({ condition: { any: "some" }, router: { tier: "gold" } });
  });

  it("takes an input that replaces the value column", async () => {
    const { data } = await workspace.members.editor.client.functions.invoke(`workflow-run/${workflowId}`, { body: { input: { orders: [], tier: "silver" } } });
    expect(data).toMatchObject({ success: true, response: { status: 204, body: null } });
  });

  it("runs the draft, not the deployed snapshot", async () => {
    const { client } = workspace.members.editor;
    const deployed = await client.rpc("deploy_workflow", { p_workflow_id: workflowId });
    expect(deployed.error).toBeNull();
    const draft = new WorkflowBuilder().block("start", "manual_trigger", {}, { name: "Start" }).block("say", "function", { code: "return 'draft';" }, { name: "Say" }).chain("start", "say").build();
    await client.from("workflows").update({ state: draft }).eq("id", workflowId);
    const { data } = await client.functions.invoke(`workflow-run/${workflowId}`, { body: {} });
    expect(data.output).toEqual({ result: "draft", stdout: "" });
  });

  it("shows the user's own code in the trace, and names what was not a function in the user's terms", async () => {
    const code = "return <start.items>.reduce((sum, n) => sum + n, 0);";
    const expression = "<start.items>.includes(2)";
    const summing = new WorkflowBuilder()
      .block("start", "manual_trigger", { inputFormat: [{ name: "items", type: "json", value: [1, 2] }] }, { name: "Start" })
      .block("has", "condition", { conditions: [{ id: "two", kind: "if", expression }, { id: "other", kind: "else" }] }, { name: "Has Two" })
      .block("sum", "function", { code }, { name: "Sum" })
      .edge("start", "has")
      .edge("has", "sum", "condition-two")
      .build();
    const id = await createWorkflow(workspace.members.editor, workspace.id, "Summing", summing);
    const { data } = await workspace.members.editor.client.functions.invoke(`workflow-run/${id}`, { body: {} });
    expect(data).toMatchObject({ success: true, output: { result: 3 } });
    const spans = data.traceSpans as { name: string; input: unknown }[];
    expect(spans.find((span) => span.name === "Sum")?.input).toEqual({ code });
    expect(spans.find((span) => span.name === "Has Two")?.input).toEqual({ conditions: [{ id: "two", kind: "if", expression }, { id: "other", kind: "else" }] });
    expect(JSON.stringify(data.traceSpans)).not.toContain("__refs");

    const response = await fetch(`${env.url}/functions/v1/workflow-run/${id}`, {
      method: "POST", headers: { Authorization: `Bearer ${workspace.members.editor.accessToken}`, "content-type": "application/json" },
      body: JSON.stringify({ input: { items: { a: 1 } } }),
    });
    const failed = await response.json();
    expect(response.status).toBe(500);
    expect(failed.error).toBe('Block "Has Two" (condition): condition 1 ("if", id "two"): TypeError: <start.items>.includes is not a function (line 1)');
    expect(JSON.stringify(failed)).not.toContain("__refs");
  });

  it("answers a failed run with 500, the failed block and the trace", async () => {
    const failing = new WorkflowBuilder().block("start", "manual_trigger", {}, { name: "Start" }).block("spin", "function", { code: "while (true) {}", timeoutMs: 200 }, { name: "Spin" }).chain("start", "spin").build();
    const id = await createWorkflow(workspace.members.editor, workspace.id, "Spinner", failing);
    const response = await fetch(`${env.url}/functions/v1/workflow-run/${id}`, { method: "POST", headers: { Authorization: `Bearer ${workspace.members.editor.accessToken}` } });
    expect(response.status).toBe(500);
    expect(await response.json()).toMatchObject({ success: false, code: "EXECUTION_FAILED", errorCode: "SANDBOX_TIMEOUT", failedBlock: { id: "spin", name: "Spin", type: "function" } });
  });

  it("stops an endless loop, a memory bomb and an escape attempt under Deno, ending only those blocks", async () => {
    const guarded = new WorkflowBuilder()
      .block("start", "manual_trigger", {}, { name: "Start" })
      .block("spin", "function", { code: "while (true) {}", timeoutMs: 200 }, { name: "Spin" })
      .block("hog", "function", { code: "const a = []; while (true) a.push({ n: a.length });", memoryLimitMb: 8 }, { name: "Hog" })
      .block("escape", "function", { code: "return Deno.env.toObject();" }, { name: "Escape" })
      .block("report", "function", { code: "return [<spin.code>, <hog.code>, <escape.code>];" }, { name: "Report" })
      .edge("start", "spin")
      .edge("start", "hog")
      .edge("start", "escape")
      .edge("spin", "report", "error")
      .edge("hog", "report", "error")
      .edge("escape", "report", "error")
      .build();
    const id = await createWorkflow(workspace.members.editor, workspace.id, "Guarded", guarded);
    const { data, error } = await workspace.members.editor.client.functions.invoke(`workflow-run/${id}`, { body: {} });
    expect(error).toBeNull();
    expect(data.output).toEqual({ result: ["SANDBOX_TIMEOUT", "SANDBOX_MEMORY_LIMIT", "BLOCK_FAILED"], stdout: "" });
  });

  it("never returns an environment value, and reads a quoted reference as its value, through POST /api/workflows/{id}/run", async () => {
    const secret = "sk-test-4f9b2c7d1e";
    const { error } = await workspace.owner.client.rpc("set_environment_variable", { p_workspace_id: workspace.id, p_name: "SECRET_B", p_value: secret });
    expect(error).toBeNull();
    const state = new WorkflowBuilder()
      .block("start", "manual_trigger", { inputFormat: [{ name: "who", type: "string", value: "Ana" }] }, { name: "Start" })
      .block("leak", "function", { code: "return '{{SECRET_B}}';" }, { name: "Leak" })
      .block("quotes", "function", { code: "return ['Hi <start.who>', \"Hi <start.who>\", `Hi <start.who>`, '{{SECRET_B}}'.length];" }, { name: "Quotes" })
      .block("fail", "function", { code: "throw new Error('rejected ' + {{SECRET_B}});" }, { name: "Fail" })
      .chain("start", "leak", "quotes")
      .edge("quotes", "fail")
      .build();
    const id = await createWorkflow(workspace.members.editor, workspace.id, "Secrets", state);
    const response = await fetch(`${env.url}/api/workflows/${id}/run`, { method: "POST", headers: { Authorization: `Bearer ${workspace.members.editor.accessToken}`, "content-type": "application/json" }, body: "{}" });
    const text = await response.text();
    expect(response.status).toBe(500);
    expect(text).not.toContain(secret);
    const body = JSON.parse(text);
    expect(body).toMatchObject({ success: false, errorCode: "BLOCK_FAILED", error: 'Block "Fail" (function): Error: rejected *** (line 1)', failedBlock: { id: "fail" } });
    const [, leak, quotes] = body.traceSpans;
    // The trace shows the code as written: the variable's name, never its value.
    expect(leak).toMatchObject({ output: { result: "***" }, input: { code: "return '{{SECRET_B}}';" } });
    expect(quotes.output).toEqual({ result: ["Hi Ana", "Hi Ana", "Hi Ana", secret.length], stdout: "" });
  });

  it("refuses a draft that saved but cannot run (no enabled trigger) with 400 INVALID_WORKFLOW and its issues, recording the run as failed", async () => {
    const untriggered = new WorkflowBuilder()
      .block("start", "manual_trigger", {}, { name: "Start", enabled: false })
      .block("work", "function", { code: "return 1;" }, { name: "Work" })
      .chain("start", "work")
      .build();
    const id = await createWorkflow(workspace.members.editor, workspace.id, "Untriggered", untriggered);
    const response = await fetch(`${env.url}/api/workflows/${id}/run`, { method: "POST", headers: { Authorization: `Bearer ${workspace.members.editor.accessToken}`, "content-type": "application/json" }, body: "{}" });
    const executionId = response.headers.get("x-execution-id");
    const message = "The workflow has no enabled trigger block, so nothing can start it";
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: message, code: "INVALID_WORKFLOW", executionId, issues: [{ code: "no_trigger", field: "blocks", message }] });
    const { data: run } = await serviceClient().from("workflow_executions").select("status, error_code, error_message").eq("id", executionId as string).single();
    expect(run).toEqual({ status: "failed", error_code: "INVALID_WORKFLOW", error_message: message });
  });

  it("refuses viewers, outsiders and anonymous callers", async () => {
    const viewer = await fetch(`${env.url}/functions/v1/workflow-run/${workflowId}`, { method: "POST", headers: { Authorization: `Bearer ${workspace.members.viewer.accessToken}` } });
    expect(viewer.status).toBe(403);
    expect(await viewer.json()).toMatchObject({ code: "FORBIDDEN" });
    const outsider = (await createWorkspace("Other")).owner;
    const hidden = await fetch(`${env.url}/functions/v1/workflow-run/${workflowId}`, { method: "POST", headers: { Authorization: `Bearer ${outsider.accessToken}` } });
    expect(hidden.status).toBe(404);
    const anonymous = await anonClient().functions.invoke(`workflow-run/${workflowId}`, { body: {} });
    expect(anonymous.error).not.toBeNull();
    expect((anonymous.error as { context?: Response }).context?.status).toBe(401);
  });
});

describe("manual runs under the plan's rate limit", () => {
  it("spend the synchronous bucket like every other run: a Free workspace's sixth run in a minute answers 429 with Retry-After", async () => {
    const free = await createWorkspace("Manual runs on Free");
    const quick = await createWorkflow(free.members.editor, free.id, "Quick", new WorkflowBuilder()
      .block("start", "manual_trigger", {}, { name: "Start" })
      .block("work", "function", { code: "return 1;" }, { name: "Work" })
      .chain("start", "work")
      .build());
    const run = () => fetch(`${env.url}/api/workflows/${quick}/run`, {
      method: "POST",
      headers: { Authorization: `Bearer ${free.members.editor.accessToken}`, "content-type": "application/json" },
      body: "{}",
    });
    const statuses: number[] = [];
    for (let index = 0; index < 5; index++) statuses.push((await run()).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    const refused = await run();
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await refused.json()).toMatchObject({ code: "RATE_LIMIT_EXCEEDED" });
  });
});
