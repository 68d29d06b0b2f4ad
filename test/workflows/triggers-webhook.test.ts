/**
 * POST /api/webhooks/trigger/{path} through the gateway, as an outside service calls it: the
 * secret in a header of the block's choice or as a bearer token, untyped and typed bodies with
 * files, the 202 and then the completed (or failed) record, repeated deliveries, and every refusal
 * in its documented shape with nothing run (docs/triggers.md).
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WorkflowBuilder } from "../../supabase/functions/_shared/workflows/state/state-builder.ts";
import { createWorkspace, type TestWorkspace } from "./factories.ts";
import { apiKey, call, deployedWorkflow, eventually, expectDocumented, record, setPlan, sql, type Answer } from "./execute-api.ts";

const TRIGGER = "/api/webhooks/trigger/{path}";
/** Paths are unique across every workspace of the stack, so each run of the suite picks its own. */
const suffix = randomUUID().slice(0, 8);
const path = (name: string) => `${name}-${suffix}`;

let workspace: TestWorkspace;
let key: string;
let bearerFlow: string;

/** Sends a delivery to a webhook path. */
function deliver(name: string, body?: unknown, headers: Record<string, string> = {}, raw?: string): Promise<Answer> {
  return call("POST", `/api/webhooks/trigger/${name}`, { headers, body, raw });
}

/** Waits for a run to end and returns its record. */
function ended(executionId: string) {
  return eventually(`run ${executionId} to end`, () => record(executionId), (row) => ["completed", "failed", "cancelled"].includes(row.status));
}

/** How many runs a workflow has recorded. */
async function runCount(workflowId: string): Promise<number> {
  const [{ count }] = await sql<{ count: number }[]>`select count(*)::int as count from public.workflow_executions where workflow_id = ${workflowId}`;
  return count;
}

beforeAll(async () => {
  workspace = await createWorkspace("Webhook triggers");
  await setPlan(workspace.id, "enterprise", { sync_per_minute: 1000, async_per_minute: 1000 });
  const editor = workspace.members.editor;
  key = (await apiKey(editor)).key;
  const { error } = await workspace.owner.client.rpc("set_environment_variable", { p_workspace_id: workspace.id, p_name: "HOOK_TOKEN", p_value: "bearer-token-from-the-environment" });
  if (error) throw error;
  bearerFlow = await deployedWorkflow(editor, workspace.id, "Bearer hook", new WorkflowBuilder()
    .block("hook", "generic_webhook", { path: path("bearer"), requireAuth: true, token: "{{HOOK_TOKEN}}" }, { name: "Webhook 1" })
    .block("greet", "function", { code: "return 'Hello ' + <webhook1.user.name> + ' from ' + <webhook1.user.address.city>;" }, { name: "Greet" })
    .chain("hook", "greet").build());
  await deployedWorkflow(editor, workspace.id, "Header hook", new WorkflowBuilder()
    .block("hook", "generic_webhook", { path: path("header"), requireAuth: true, token: "literal-header-secret", secretHeaderName: "X-Service-Secret" }, { name: "Webhook 1" })
    .block("echo", "function", { code: "return <webhook1.event>;" }, { name: "Echo" })
    .chain("hook", "echo").build());
  await deployedWorkflow(editor, workspace.id, "Typed hook", new WorkflowBuilder()
    .block("hook", "generic_webhook", { path: path("typed"), inputFormat: [{ name: "subject", type: "string" }, { name: "priority", type: "number" }, { name: "docs", type: "files" }] }, { name: "Webhook 1" })
    .block("read", "function", {
      code: "return { subject: <webhook1.subject>, priority: <webhook1.priority>, extra: <webhook1.extra>, url: <webhook1.docs[0].url>, name: <webhook1.docs[0].name>, size: <webhook1.docs[0].size>, type: <webhook1.docs[0].type>, uploadedAt: <webhook1.docs[0].uploadedAt>, expiresAt: <webhook1.docs[0].expiresAt>, linked: <webhook1.docs[1]> };",
    }, { name: "Read" })
    .chain("hook", "read").build());
  await deployedWorkflow(editor, workspace.id, "Failing hook", new WorkflowBuilder()
    .block("hook", "generic_webhook", { path: path("failing") }, { name: "Webhook 1" })
    .block("boom", "function", { code: "throw new Error('the order ' + <webhook1.id> + ' is unknown');" }, { name: "Boom" })
    .chain("hook", "boom").build());
});

afterAll(async () => {
  await sql.end();
});

describe("the webhook trigger", () => {
  it("answers 202 at once with the execution, then runs the workflow; the record says webhook", async () => {
    const answer = await deliver(path("bearer"), { user: { name: "Ana", address: { city: "Recife" } } }, { authorization: "Bearer bearer-token-from-the-environment" });
    expect(answer.status).toBe(202);
    expect(answer.body).toEqual({ success: true, executionId: expect.any(String) });
    expect(answer.headers.get("x-execution-id")).toBe(answer.body.executionId);
    expect(answer.headers.get("x-ratelimit-limit")).toBe("1000");
    expectDocumented("POST", TRIGGER, answer);

    const executionId = String(answer.body.executionId);
    const run = await ended(executionId);
    expect(run).toMatchObject({ status: "completed", level: "info", trigger: "webhook", mode: "async", output: { result: "Hello Ana from Recife", stdout: "" } });
    // The run's job, as the workspace's API clients read it.
    const job = await call("GET", `/api/jobs/${executionId}`, { headers: { "X-API-Key": key } });
    expect(job.body).toMatchObject({ status: "completed", metadata: { trigger: "webhook", mode: "async" } });
  });

  it("takes the secret as a bearer token and refuses a missing or wrong one, running nothing", async () => {
    const before = await runCount(bearerFlow);
    const missing = await deliver(path("bearer"), { user: { name: "Eve" } });
    expect(missing.status).toBe(401);
    expect(missing.body).toEqual({ error: "This webhook requires its secret in Authorization: Bearer <token>", code: "UNAUTHORIZED" });
    expectDocumented("POST", TRIGGER, missing);
    const wrong = await deliver(path("bearer"), { user: { name: "Eve" } }, { authorization: "Bearer bearer-token-from-the-environmenT" });
    expect(wrong.status).toBe(401);
    expect(wrong.body.code).toBe("UNAUTHORIZED");
    const inTheWrongPlace = await deliver(path("bearer"), { user: { name: "Eve" } }, { "X-Service-Secret": "bearer-token-from-the-environment" });
    expect(inTheWrongPlace.status).toBe(401);
    expect(await runCount(bearerFlow)).toBe(before);
  });

  it("takes the secret in the block's own header when it names one", async () => {
    const missing = await deliver(path("header"), { event: "paid" }, { authorization: "Bearer literal-header-secret" });
    expect(missing.status).toBe(401);
    expect(missing.body.error).toBe("This webhook requires its secret in the X-Service-Secret header");
    const wrong = await deliver(path("header"), { event: "paid" }, { "X-Service-Secret": "literal-header-secreT" });
    expect(wrong.body).toEqual({ error: "The secret in the X-Service-Secret header does not match this webhook's", code: "UNAUTHORIZED" });
    const right = await deliver(path("header"), { event: "paid" }, { "X-Service-Secret": "literal-header-secret" });
    expect(right.status).toBe(202);
    expect(await ended(String(right.body.executionId))).toMatchObject({ status: "completed", output: { result: "paid" } });
  });

  it("types the fields of an Input Format and keeps files as in the API trigger", async () => {
    const answer = await deliver(path("typed"), {
      subject: "Refund", priority: "2", extra: { kept: true },
      docs: [
        { type: "file", data: `data:text/plain;base64,${btoa("invoice 42")}`, name: "invoice.txt", mime: "text/plain" },
        { type: "url", data: "https://example.test/terms.pdf", name: "terms.pdf", mime: "application/pdf" },
      ],
    });
    expect(answer.status).toBe(202);
    const run = await ended(String(answer.body.executionId));
    expect(run.status).toBe("completed");
    const result = (run.output as { result: Record<string, unknown> }).result;
    expect(result).toMatchObject({ subject: "Refund", priority: 2, extra: { kept: true }, name: "invoice.txt", size: 10, type: "text/plain" });
    expect(Date.parse(String(result.expiresAt)) - Date.parse(String(result.uploadedAt))).toBe(5 * 60_000);
    expect(result.linked).toMatchObject({ name: "terms.pdf", url: "https://example.test/terms.pdf", type: "application/pdf", size: 0 });
    expect(result.linked).not.toHaveProperty("uploadedAt");
    const stored = await fetch(String(result.url));
    expect(await stored.text()).toBe("invoice 42");
    expect(run.files).toEqual([expect.objectContaining({ name: "invoice.txt", size: 10 }), expect.objectContaining({ name: "terms.pdf", key: "url/terms.pdf" })]);
  });

  it("refuses input its Input Format cannot take before anything runs", async () => {
    const workflowId = (await sql<{ workflow_id: string }[]>`select workflow_id from public.workflow_webhooks where path = ${path("typed")}`)[0].workflow_id;
    const before = await runCount(workflowId);
    const badNumber = await deliver(path("typed"), { priority: "high" });
    expect(badNumber.status).toBe(400);
    expect(badNumber.body).toEqual({ error: 'trigger "Webhook 1" field "priority" must be a number (got "high")', code: "INVALID_INPUT" });
    expectDocumented("POST", TRIGGER, badNumber);
    const badFile = await deliver(path("typed"), { docs: [{ type: "file", data: "data:text/plain,not-base64", name: "a.txt" }] });
    expect(badFile.status).toBe(400);
    expect(badFile.body.code).toBe("INVALID_INPUT");
    const notObject = await deliver(path("typed"), [1, 2]);
    expect(notObject.status).toBe(400);
    expect(await runCount(workflowId)).toBe(before);
  });

  it("answers a malformed body, an unknown path and an undeployed workflow in the documented shape", async () => {
    const malformed = await deliver(path("header"), undefined, { "X-Service-Secret": "literal-header-secret", "content-type": "application/json" }, "{not json");
    expect(malformed.status).toBe(400);
    expect(malformed.body).toEqual({ error: "The body is not valid JSON", code: "INVALID_BODY" });
    const unknown = await deliver(`nobody-${suffix}`, {});
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: `No deployed workflow listens on webhook path "nobody-${suffix}"`, code: "NOT_FOUND" });
    expectDocumented("POST", TRIGGER, unknown);
    const oddPath = await deliver("..%2Fetc", {});
    expect(oddPath.status).toBe(404);
    const get = await call("GET", `/api/webhooks/trigger/${path("header")}`);
    expect(get.status).toBe(405);

    const gone = await deployedWorkflow(workspace.members.editor, workspace.id, "Gone hook", new WorkflowBuilder()
      .block("hook", "generic_webhook", { path: path("gone") }, { name: "Webhook 1" }).build());
    expect((await deliver(path("gone"), {})).status).toBe(202);
    const { error } = await workspace.members.editor.client.rpc("undeploy_workflow", { p_workflow_id: gone });
    expect(error).toBeNull();
    const undeployed = await deliver(path("gone"), {});
    expect(undeployed.status).toBe(404);
    expect(undeployed.body.code).toBe("NOT_FOUND");
  });

  it("does not run a repeated delivery twice", async () => {
    const body = { user: { name: "Bia", address: { city: "Natal" } } };
    const headers = { authorization: "Bearer bearer-token-from-the-environment", "Idempotency-Key": `delivery-${randomUUID()}` };
    const first = await deliver(path("bearer"), body, headers);
    const again = await deliver(path("bearer"), body, headers);
    expect(first.status).toBe(202);
    expect(again.status).toBe(202);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    const [{ count }] = await sql<{ count: number }[]>`select count(*)::int as count from public.workflow_executions where id = ${String(first.body.executionId)}`;
    expect(count).toBe(1);

    const github = { authorization: "Bearer bearer-token-from-the-environment", "X-GitHub-Delivery": randomUUID() };
    const hook1 = await deliver(path("bearer"), body, github);
    const hook2 = await deliver(path("bearer"), body, github);
    expect(hook2.body.executionId).toBe(hook1.body.executionId);

    const changed = await deliver(path("bearer"), { ...body, user: { name: "Other" } }, headers);
    expect(changed.status).toBe(409);
    expect(changed.body).toMatchObject({ code: "IDEMPOTENCY_KEY_REUSED", executionId: first.body.executionId });
  });

  it("shows a run that fails in the execution records", async () => {
    const answer = await deliver(path("failing"), { id: 77 });
    expect(answer.status).toBe(202);
    const run = await ended(String(answer.body.executionId));
    expect(run).toMatchObject({ status: "failed", level: "error", trigger: "webhook", error_code: "BLOCK_FAILED", failed_block: { id: "boom", name: "Boom", type: "function" } });
    expect(run.error_message).toContain("the order 77 is unknown");
  });

  it("is rate-limited and charged like an async API run", async () => {
    const limited = await createWorkspace("Webhook limits");
    const account = await setPlan(limited.id, "enterprise", { async_per_minute: 1 });
    await deployedWorkflow(limited.members.editor, limited.id, "Limited hook", new WorkflowBuilder()
      .block("hook", "generic_webhook", { path: path("limited") }, { name: "Webhook 1" }).build());
    const first = await deliver(path("limited"), {});
    expect(first.status).toBe(202);
    expect(first.headers.get("x-ratelimit-remaining")).toBe("0");
    const second = await deliver(path("limited"), {});
    expect(second.status).toBe(429);
    expect(second.body).toMatchObject({ code: "RATE_LIMIT_EXCEEDED", retryAfter: expect.any(Number) });
    expect(Number(second.headers.get("retry-after"))).toBeGreaterThan(0);
    expectDocumented("POST", TRIGGER, second);
    const [{ charged }] = await sql<{ charged: number }[]>`
      select coalesce(sum(amount), 0)::float8 as charged from public.usage_ledger where billing_account_id = ${account} and kind = 'execution'`;
    expect(charged).toBeCloseTo(0.001, 10);
  });
});
