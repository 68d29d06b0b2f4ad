/**
 * The API block in whole runs: in process (error edges, masking of credentials typed into the
 * block, attempts in the trace span, the block's timeout over its retries) and through the stack's
 * manual-run endpoint, whose functions reach the misbehaving target over loopback because the test
 * stack sets OUTBOUND_ALLOWED_HOSTS to it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runWorkflow } from "../../supabase/functions/_shared/workflows/runs/run-workflow.ts";
import { WorkflowBuilder } from "../../supabase/functions/_shared/workflows/state/state-builder.ts";
import { startMisbehavingServer, type MisbehavingServer } from "../stand-ins/misbehaving-http.ts";
import { standInOutbound } from "../stand-ins/outbound.ts";
import { createWorkflow, createWorkspace, type TestWorkspace } from "./factories.ts";
import { liftLimits } from "./logs-helpers.ts";

let target: MisbehavingServer;
beforeAll(async () => {
  target = await startMisbehavingServer();
});
afterAll(async () => {
  await target.close();
});

/** API trigger → Fetch (an API block) → Done, and Failed on Fetch's error edge. */
function fetchFlow(api: Record<string, unknown>) {
  return new WorkflowBuilder()
    .block("start", "api_trigger", {}, { name: "Start" })
    .block("fetch", "api", api, { name: "Fetch" })
    .block("done", "response", { body: { data: "<fetch.data>", status: "<fetch.status>" } }, { name: "Done" })
    .block("failed", "response", { status: 502, body: { error: "<fetch.error>", code: "<fetch.code>", status: "<fetch.status>" } }, { name: "Failed" })
    .edge("start", "fetch")
    .edge("fetch", "done")
    .edge("fetch", "failed", "error")
    .build();
}

describe("API block runs, in process", () => {
  const services = { outbound: standInOutbound() };

  it("follows the error edge with <fetch.error>, <fetch.code> and <fetch.status> of a request that finally failed", async () => {
    const result = await runWorkflow({ workflow: fetchFlow({ url: `${target.url}/status/404` }), trigger: { kind: "api", input: {} }, services });
    expect(result.status).toBe("success");
    expect(result.output).toEqual({
      data: { error: `Block "Fetch" (api): GET ${target.url}/status/404 answered 404 Not Found`, code: "HTTP_ERROR", status: 404 },
      status: 502,
      headers: {},
    });
  });

  it("fails the run naming the block when there is no error edge", async () => {
    const state = new WorkflowBuilder()
      .block("start", "api_trigger", {}, { name: "Start" })
      .block("fetch", "api", { url: `${target.url}/status/500`, retries: 1, retryDelayMs: 5 }, { name: "Fetch" })
      .edge("start", "fetch")
      .build();
    const result = await runWorkflow({ workflow: state, trigger: { kind: "api", input: {} }, services });
    expect(result.status).toBe("error");
    expect(result.error).toEqual({ code: "HTTP_ERROR", message: `Block "Fetch" (api): GET ${target.url}/status/500 answered 500 Internal Server Error after 2 attempts`, block: { id: "fetch", name: "Fetch", type: "api" } });
    const span = result.traceSpans.find((candidate) => candidate.blockId === "fetch");
    expect(span?.output).toMatchObject({ status: 500, attempts: [{ attempt: 1, status: 500, retryInMs: expect.any(Number) }, { attempt: 2, status: 500 }] });
  });

  it("shows every attempt in the trace span of a request that succeeded on a retry", async () => {
    const result = await runWorkflow({ workflow: fetchFlow({ url: `${target.url}/flaky/span?fail=2&status=503`, retryDelayMs: 5 }), trigger: { kind: "api", input: {} }, services });
    expect(result.status).toBe("success");
    const span = result.traceSpans.find((candidate) => candidate.blockId === "fetch");
    expect((span?.output as { attempts: { status: number }[] }).attempts.map((attempt) => attempt.status)).toEqual([503, 503, 200]);
  });

  it("masks credentials typed into the block in everything the run returns, while the request carries them", async () => {
    const token = "literal-token-0123456789";
    const queryKey = "query-key-abcdefghij";
    const result = await runWorkflow({
      workflow: fetchFlow({ url: `${target.url}/echo`, headers: { Authorization: `Bearer ${token}`, "X-Api-Key": "header-key-klmnopqrs" }, query: { api_key: queryKey } }),
      trigger: { kind: "api", input: {} },
      services,
    });
    expect(result.status).toBe("success");
    const seen = target.requests.at(-1);
    expect(seen?.headers.authorization).toBe(`Bearer ${token}`);
    expect(seen?.path).toContain(queryKey);
    const returned = JSON.stringify(result);
    for (const secret of [token, queryKey, "header-key-klmnopqrs"]) expect(returned).not.toContain(secret);
    const span = result.traceSpans.find((candidate) => candidate.blockId === "fetch");
    expect((span?.input as { headers: Record<string, string> }).headers.Authorization).toBe("***");
    expect(((result.output as { data: { data: { headers: Record<string, string> } } }).data.data.headers).authorization).toBe("***");
  });

  it("never runs past its own timeout, retries included", async () => {
    const started = Date.now();
    const result = await runWorkflow({ workflow: fetchFlow({ url: `${target.url}/hang`, timeoutMs: 800, retries: 5, retryDelayMs: 10 }), trigger: { kind: "api", input: {} }, services });
    expect(Date.now() - started).toBeLessThan(5_000);
    // Each attempt gets only the time the block has left, so the last one times out just before the block would.
    expect(result.output).toMatchObject({ status: 502, data: { code: "OUTBOUND_TIMEOUT", error: expect.stringMatching(/^Block "Fetch" \(api\): GET .*\/hang failed: no complete answer from .* within \d+ ms$/) } });
  });
});

describe("API block runs through the stack's manual-run endpoint", () => {
  let workspace: TestWorkspace;
  beforeAll(async () => {
    workspace = await createWorkspace("API block runs");
    // Manual runs spend the plan's synchronous rate limit (5 a minute on Free); this suite runs more.
    await liftLimits(workspace.id);
  });

  async function runDraft(state: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
    const editor = workspace.members.editor;
    const id = await createWorkflow(editor, workspace.id, `API block ${Math.random()}`, state as never);
    const { data, error, response } = await editor.client.functions.invoke(`workflow-run/${id}`, { body: {} });
    const body = (data ?? (error ? await (error as { context: Response }).context.json() : null)) as Record<string, unknown>;
    return { status: response?.status ?? 0, body };
  }

  it("calls a loopback target the stack allows and returns its answer", async () => {
    const { status, body } = await runDraft(fetchFlow({ url: `${target.url}/json`, query: { from: "stack" } }));
    expect(status).toBe(200);
    expect(body.output).toEqual({ data: { data: { ok: true, items: [1, 2, 3] }, status: 200 }, status: 200, headers: {} });
    expect(target.requests.at(-1)?.path).toBe("/json?from=stack");
  });

  it("refuses a redirect to the metadata address, and the error edge answers", async () => {
    const { status, body } = await runDraft(fetchFlow({ url: `${target.url}/redirect?to=${encodeURIComponent("http://169.254.169.254/latest/meta-data/")}` }));
    expect(status).toBe(200);
    expect(body.output).toMatchObject({ status: 502, data: { code: "OUTBOUND_BLOCKED", status: null, error: expect.stringContaining("169.254.169.254 is a link-local (cloud metadata lives here) address, which workflows may not call") } });
  });

  it("reports a private address as the run's documented failure, not a crash", async () => {
    const state = new WorkflowBuilder()
      .block("start", "api_trigger", {}, { name: "Start" })
      .block("fetch", "api", { url: "http://10.0.0.1/admin" }, { name: "Fetch" })
      .edge("start", "fetch")
      .build();
    const { status, body } = await runDraft(state);
    expect(status).toBe(500);
    expect(body).toMatchObject({ success: false, code: "EXECUTION_FAILED", errorCode: "OUTBOUND_BLOCKED", error: 'Block "Fetch" (api): GET http://10.0.0.1/admin failed: 10.0.0.1 is a private address, which workflows may not call' });
  });
});
