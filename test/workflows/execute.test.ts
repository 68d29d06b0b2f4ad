/**
 * POST /api/workflows/{id}/execute through the gateway, as an API client calls it: every mode
 * (sync, Response block, streamed, async), every refusal and its `{error, code}`, files of each
 * kind, idempotent replays, and the record each run leaves (docs/workflows-api.md).
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serviceClient } from "../helpers/clients.ts";
import { WorkflowBuilder } from "../../supabase/functions/_shared/workflows/state/state-builder.ts";
import { createWorkflow, createWorkspace, type TestWorkspace } from "./factories.ts";
import { apiKey, call, deployedWorkflow, eventually, execute, expectDocumented, record, setPlan, sql, sseFrames } from "./execute-api.ts";

const EXECUTE = "/api/workflows/{workflowId}/execute";

let workspace: TestWorkspace;
let key: string;
let typed: string;
let answering: string;
let failing: string;
let waiting: string;
let raw: string;
let files: string;

beforeAll(async () => {
  workspace = await createWorkspace("Execute API");
  // Enterprise with room to spare: the rate limits have a suite of their own.
  await setPlan(workspace.id, "enterprise", { sync_per_minute: 1000, async_per_minute: 1000 });
  const editor = workspace.members.editor;
  key = (await apiKey(editor)).key;
  typed = await deployedWorkflow(editor, workspace.id, "Typed", new WorkflowBuilder()
    .block("api", "api_trigger", { inputFormat: [{ name: "count", type: "number" }, { name: "loud", type: "boolean" }, { name: "tags", type: "json" }, { name: "who", type: "string" }] }, { name: "API" })
    .block("echo", "function", { code: "return { count: <api.count>, loud: <api.loud>, tags: <api.tags>, who: <api.who>, input: <api.input> };" }, { name: "Echo" })
    .chain("api", "echo").build());
  answering = await deployedWorkflow(editor, workspace.id, "Answering", new WorkflowBuilder()
    .block("api", "api_trigger", { inputFormat: [{ name: "id", type: "number" }] }, { name: "API" })
    .block("made", "response", { status: 201, headers: { "X-Order": "<api.id>" }, body: { created: "<api.id>" } }, { name: "Made" })
    .chain("api", "made").build());
  failing = await deployedWorkflow(editor, workspace.id, "Failing", new WorkflowBuilder()
    .block("api", "api_trigger", {}, { name: "API" })
    .block("boom", "function", { code: "throw new Error('no stock');" }, { name: "Boom" })
    .chain("api", "boom").build());
  waiting = await deployedWorkflow(editor, workspace.id, "Waiting", new WorkflowBuilder()
    .block("api", "api_trigger", { inputFormat: [{ name: "ms", type: "number" }] }, { name: "API" })
    .block("first", "function", { code: "return 'started';" }, { name: "First" })
    .block("pause", "wait", { amount: "<api.ms>", unit: "ms" }, { name: "Pause" })
    .block("last", "function", { code: "return { done: true };" }, { name: "Last" })
    .chain("api", "first", "pause", "last").build());
  raw = await deployedWorkflow(editor, workspace.id, "Raw", new WorkflowBuilder()
    .block("api", "api_trigger", {}, { name: "API" })
    .block("echo", "function", { code: "return <api.input>;" }, { name: "Echo" })
    .chain("api", "echo").build());
  files = await deployedWorkflow(editor, workspace.id, "Files", new WorkflowBuilder()
    .block("api", "api_trigger", { inputFormat: [{ name: "docs", type: "files" }] }, { name: "API" })
    .block("read", "function", { code: "return { url: <api.docs[0].url>, name: <api.docs[0].name>, size: <api.docs[0].size>, type: <api.docs[0].type>, uploadedAt: <api.docs[0].uploadedAt>, expiresAt: <api.docs[0].expiresAt>, second: <api.docs[1]> };" }, { name: "Read" })
    .chain("api", "read").build());
});

afterAll(async () => {
  await sql.end();
});

describe("synchronous runs", () => {
  it("answer 200 {success, executionId, output, metadata} with the rate-limit headers, and record the run", async () => {
    const answer = await execute(typed, key, { count: "42", loud: "true", tags: '["a"]', who: 7, extra: "kept" });
    expect(answer.status).toBe(200);
    expectDocumented("POST", EXECUTE, answer);
    expect(answer.body).toMatchObject({
      success: true,
      output: { result: { count: 42, loud: true, tags: ["a"], who: "7", input: { count: 42, loud: true, tags: ["a"], who: "7", extra: "kept" } } },
      metadata: { duration: expect.any(Number), startTime: expect.any(String), endTime: expect.any(String) },
    });
    expect(answer.headers.get("x-ratelimit-limit")).toBe("1000");
    expect(Number(answer.headers.get("x-ratelimit-remaining"))).toBeLessThan(1000);
    expect(new Date(answer.headers.get("x-ratelimit-reset") ?? "").toISOString()).toBe(answer.headers.get("x-ratelimit-reset"));
    const executionId = answer.body.executionId as string;
    expect(answer.headers.get("x-execution-id")).toBe(executionId);
    const row = await record(executionId);
    expect(row).toMatchObject({ status: "completed", level: "info", trigger: "api", mode: "sync", error_code: null, deployment_version: 1, attempt: 1 });
    expect(row.output).toEqual((answer.body as { output: unknown }).output);
    expect(row.cost).toMatchObject({ total: 0.001, base: 0.001, tokens: { prompt: 0, completion: 0, total: 0 }, models: {} });
    expect((row.trace_spans as { name: string }[]).map((span) => span.name)).toEqual(["API", "Echo"]);
    expect(row.started_at).not.toBeNull();
    expect(row.ended_at).not.toBeNull();
  });

  it("give missing fields null, keep unknown ones in <api.input> only, and leave stream and selectedOutputs out of the input", async () => {
    const answer = await execute(typed, key, { who: "Ana", selectedOutputs: ["Echo.result"], nickname: "Aninha" });
    expect(answer.body.output).toEqual({ "Echo.result": { count: null, loud: null, tags: null, who: "Ana", input: { who: "Ana", nickname: "Aninha", count: null, loud: null, tags: null } } });
  });

  it("read the whole raw JSON body as <api.input> without an Input Format, and a body wrapped in input as Sim's SDK sends it", async () => {
    expect((await execute(raw, key, [1, "two", { three: 3 }])).body.output).toEqual({ result: [1, "two", { three: 3 }], stdout: "" });
    expect((await execute(raw, key, { order: { id: 9 } })).body.output).toEqual({ result: { order: { id: 9 } }, stdout: "" });
    expect((await call("POST", `/api/workflows/${raw}/execute`, { headers: { "X-API-Key": key } })).body.output).toEqual({ result: {}, stdout: "" });
    expect((await execute(typed, key, { input: { count: 3 } })).body.output).toMatchObject({ result: { count: 3 } });
  });

  it("apply a Response block's status, headers and body", async () => {
    const answer = await execute(answering, key, { id: "12" });
    expect(answer.status).toBe(201);
    expect(answer.headers.get("x-order")).toBe("12");
    expect(answer.body).toEqual({ created: 12 });
    expect(answer.headers.get("x-ratelimit-limit")).toBe("1000");
    expect((await record(answer.headers.get("x-execution-id")!)).response).toEqual({ status: 201, headers: { "X-Order": "12" }, body: { created: 12 } });
  });

  it("answer a Response block's answer as it is, with selectedOutputs checked but not applied to it", async () => {
    const answer = await execute(answering, key, { id: "12", selectedOutputs: ["Made.status"] });
    expect(answer.status).toBe(201);
    expect(answer.headers.get("x-order")).toBe("12");
    expect(answer.body).toEqual({ created: 12 });
    const unknown = await execute(answering, key, { id: "12", selectedOutputs: ["Nobody.status"] });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ code: "UNKNOWN_SELECTED_OUTPUT" });
  });

  it("answer a failed run 500 with the failed block, recorded failed at level error", async () => {
    const answer = await execute(failing, key, {});
    expect(answer.status).toBe(500);
    expectDocumented("POST", EXECUTE, answer);
    expect(answer.body).toMatchObject({ success: false, code: "EXECUTION_FAILED", errorCode: "BLOCK_FAILED", failedBlock: { id: "boom", name: "Boom", type: "function" }, error: expect.stringContaining("no stock") });
    const row = await record(answer.body.executionId as string);
    expect(row).toMatchObject({ status: "failed", level: "error", error_code: "BLOCK_FAILED", failed_block: { id: "boom", name: "Boom", type: "function" } });
  });

  it("answer 408 when the run passes its time limit, recorded failed with RUN_TIMEOUT", async () => {
    const answer = await execute(waiting, key, { ms: 5000 }, { "X-Execution-Timeout-Seconds": "1" });
    expect(answer.status).toBe(408);
    expectDocumented("POST", EXECUTE, answer);
    expect(answer.body).toMatchObject({ success: false, code: "EXECUTION_TIMEOUT", errorCode: "RUN_TIMEOUT" });
    expect(await record(answer.body.executionId as string)).toMatchObject({ status: "failed", level: "error", error_code: "RUN_TIMEOUT" });
  });
});

describe("refusals", () => {
  it("answer each bad request with its status and {error, code}, never a 5xx", async () => {
    const viewerKey = (await apiKey(workspace.members.viewer)).key;
    const revoked = await apiKey(workspace.members.admin);
    await workspace.members.admin.client.rpc("revoke_api_key", { p_id: revoked.id });
    const outsider = await createWorkspace("Outsiders");
    const foreignKey = (await apiKey(outsider.owner)).key;
    const undeployed = await createWorkflow(workspace.members.editor, workspace.id, "Draft only", new WorkflowBuilder().block("api", "api_trigger", {}, { name: "API" }).build());

    const cases: [string, Promise<Awaited<ReturnType<typeof execute>>>, number, string][] = [
      ["malformed JSON", call("POST", `/api/workflows/${typed}/execute`, { headers: { "X-API-Key": key, "content-type": "application/json" }, raw: '{"count": ' }), 400, "INVALID_BODY"],
      ["a field of the wrong type", execute(typed, key, { count: "many" }), 400, "INVALID_INPUT"],
      ["stream that is not a boolean", execute(typed, key, { stream: "yes" }), 400, "INVALID_BODY"],
      ["an unknown selectedOutputs entry", execute(typed, key, { selectedOutputs: ["Nobody.result"] }), 400, "UNKNOWN_SELECTED_OUTPUT"],
      ["a selectedOutputs entry that is no reference", execute(typed, key, { selectedOutputs: ["Echo"] }), 400, "UNKNOWN_SELECTED_OUTPUT"],
      ["a bad data URL", execute(files, key, { docs: [{ type: "file", data: "data:text/plain,not-base64", name: "a.txt" }] }), 400, "INVALID_INPUT"],
      ["a URL entry that is not http(s)", execute(files, key, { docs: [{ type: "url", data: "file:///etc/passwd", name: "p" }] }), 400, "INVALID_INPUT"],
      ["no key", execute(typed, null, {}), 401, "UNAUTHORIZED"],
      ["an unknown key", execute(typed, `orb_${"0".repeat(48)}`, {}), 401, "UNAUTHORIZED"],
      ["a revoked key", execute(typed, revoked.key, {}), 401, "UNAUTHORIZED"],
      ["another workspace's key", execute(typed, foreignKey, {}), 404, "NOT_FOUND"],
      ["a viewer's key", execute(typed, viewerKey, {}), 403, "FORBIDDEN"],
      ["an undeployed workflow", execute(undeployed, key, {}), 403, "NOT_DEPLOYED"],
      ["an unknown workflow", execute(randomUUID(), key, {}), 404, "NOT_FOUND"],
      ["an id that is no UUID", execute("not-an-id", key, {}), 404, "NOT_FOUND"],
      ["an unknown execution mode", execute(typed, key, {}, { "X-Execution-Mode": "later" }), 400, "INVALID_HEADER"],
      ["a time limit past the maximum", execute(typed, key, {}, { "X-Execution-Timeout-Seconds": "100000" }), 400, "INVALID_HEADER"],
      ["stream with async", execute(typed, key, { stream: true }, { "X-Execution-Mode": "async" }), 400, "INVALID_BODY"],
    ];
    for (const [label, pending, status, code] of cases) {
      const answer = await pending;
      expect({ label, status: answer.status, code: answer.body.code }).toEqual({ label, status, code });
      expect(typeof answer.body.error).toBe("string");
      expectDocumented("POST", EXECUTE, answer);
    }
  });

  it("record a run refused for its input as failed, with nothing half-stored", async () => {
    const big = "A".repeat(Math.ceil((20 * 1024 * 1024 + 10) / 3) * 4);
    const good = { type: "file", data: `data:text/plain;base64,${btoa("first file")}`, name: "first.txt" };
    const answer = await execute(files, key, { docs: [good, { type: "file", data: `data:text/plain;base64,${big}`, name: "huge.txt" }] });
    expect(answer.status).toBe(413);
    expect(answer.body).toMatchObject({ code: "FILE_TOO_LARGE", error: expect.stringContaining("20 MB") });
    const executionId = answer.body.executionId as string;
    expect(await record(executionId)).toMatchObject({ status: "failed", level: "error", error_code: "FILE_TOO_LARGE", files: null });
    const { data } = await serviceClient().storage.from("workflow-files").list(`${workspace.id}/${files}/${executionId}`);
    expect(data ?? []).toEqual([]);
  });

  it("refuse a body over the 32 MiB cap with 413 BODY_TOO_LARGE", async () => {
    const answer = await call("POST", `/api/workflows/${raw}/execute`, { headers: { "X-API-Key": key, "content-type": "application/json" }, raw: JSON.stringify({ blob: "x".repeat(33 * 1024 * 1024) }) });
    expect(answer.status).toBe(413);
    expect(answer.body).toMatchObject({ code: "BODY_TOO_LARGE" });
    expectDocumented("POST", EXECUTE, answer);
  });
});

describe("files", () => {
  it("store inline files as UserFiles with a 5-minute signed URL, and pass URL entries through", async () => {
    const answer = await execute(files, key, {
      docs: [
        { type: "file", data: `data:text/plain;base64,${btoa("total: 42")}`, name: "invoice.txt", mime: "text/plain" },
        { type: "url", data: "https://example.test/report.pdf", name: "report.pdf", mime: "application/pdf" },
      ],
    });
    expect(answer.status).toBe(200);
    const read = (answer.body.output as { result: Record<string, unknown> }).result;
    expect(read).toMatchObject({ name: "invoice.txt", size: 9, type: "text/plain" });
    expect(Date.parse(read.expiresAt as string) - Date.parse(read.uploadedAt as string)).toBe(5 * 60_000);
    const url = new URL(read.url as string);
    const token = url.searchParams.get("token")!;
    const claims = JSON.parse(Buffer.from(token.split(".")[1], "base64url").toString()) as { exp: number; iat: number };
    expect(claims.exp - claims.iat).toBe(300);
    expect(await (await fetch(url)).text()).toBe("total: 42");
    expect(read.second).toEqual({ id: expect.stringMatching(/^file_/), name: "report.pdf", url: "https://example.test/report.pdf", size: 0, type: "application/pdf", key: "url/report.pdf" });
    const row = await record(answer.body.executionId as string);
    expect((row.files as { name: string }[]).map((file) => file.name)).toEqual(["invoice.txt", "report.pdf"]);
  });
});

describe("streamed runs", () => {
  it("send each selected output as a chunk from its block, then done and [DONE]", async () => {
    const answer = await execute(waiting, key, { ms: 10, stream: true, selectedOutputs: ["first.result", "LAST.result.done"] });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(answer.headers.get("x-ratelimit-limit")).toBe("1000");
    const frames = sseFrames(answer.text);
    expect(frames).toEqual([
      { blockId: "first", chunk: "started" },
      { blockId: "last", chunk: "true" },
      { event: "done", success: true, output: { "first.result": "started", "LAST.result.done": true }, metadata: { duration: expect.any(Number) } },
      "[DONE]",
    ]);
    expect(await record(answer.headers.get("x-execution-id")!)).toMatchObject({ status: "completed" });
  });

  it("end a failed run with done success false, and a run past its limit with an error event", async () => {
    const failed = sseFrames((await execute(failing, key, { stream: true })).text);
    expect(failed).toEqual([{ event: "done", success: false, output: expect.anything(), metadata: { duration: expect.any(Number) }, error: expect.stringContaining("no stock"), errorCode: "BLOCK_FAILED", failedBlock: { id: "boom", name: "Boom", type: "function" } }, "[DONE]"]);
    const late = sseFrames((await execute(waiting, key, { ms: 5000, stream: true }, { "X-Execution-Timeout-Seconds": "1" })).text);
    expect(late).toEqual([{ event: "error", error: expect.stringContaining("time limit") }, "[DONE]"]);
  });

  it("cancel the run when the client disconnects", async () => {
    const controller = new AbortController();
    const { fetchFrom, simulatedClientAddress } = await import("../helpers/clients.ts");
    const response = await fetchFrom(simulatedClientAddress())(`${process.env.SUPABASE_URL}/api/workflows/${waiting}/execute`, {
      method: "POST", headers: { "X-API-Key": key, "content-type": "application/json" }, body: JSON.stringify({ ms: 10_000, stream: true, selectedOutputs: ["first.result"] }), signal: controller.signal,
    });
    const executionId = response.headers.get("x-execution-id")!;
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    const row = await eventually("the run to be cancelled", () => record(executionId), (run) => run.status !== "running");
    expect(row.status).toBe("cancelled");
  });
});

describe("async runs", () => {
  it("answer 202 with the job link, and run to completion through the worker", async () => {
    const answer = await execute(typed, key, { count: 5 }, { "X-Execution-Mode": "async" });
    expect(answer.status).toBe(202);
    expectDocumented("POST", EXECUTE, answer);
    const executionId = answer.body.executionId as string;
    expect(answer.body).toEqual({ success: true, taskId: executionId, executionId, status: "queued", createdAt: expect.any(String), links: { status: `/api/jobs/${executionId}` } });
    const job = await eventually("the job to complete", () => call("GET", `/api/jobs/${executionId}`, { headers: { "X-API-Key": key } }), (read) => read.body.status === "completed");
    expectDocumented("GET", "/api/jobs/{executionId}", job);
    expect(job.body).toMatchObject({ success: true, executionId, workflowId: typed, status: "completed", output: { result: { count: 5 } }, metadata: { trigger: "api", mode: "async", attempt: 1 } });
    expect(await record(executionId)).toMatchObject({ status: "completed", mode: "async" });
  });

  it("report a failed job with its error, and hide jobs from other workspaces' keys", async () => {
    const executionId = (await execute(failing, key, {}, { "X-Execution-Mode": "async" })).body.executionId as string;
    const job = await eventually("the job to fail", () => call("GET", `/api/jobs/${executionId}`, { headers: { "X-API-Key": key } }), (read) => read.body.status === "failed");
    expect(job.body).toMatchObject({ status: "failed", error: { code: "BLOCK_FAILED", failedBlock: { id: "boom" } } });
    expect(job.body).not.toHaveProperty("output");
    const stranger = (await apiKey((await createWorkspace("Strangers")).owner)).key;
    const hidden = await call("GET", `/api/jobs/${executionId}`, { headers: { "X-API-Key": stranger } });
    expect(hidden.status).toBe(404);
    expectDocumented("GET", "/api/jobs/{executionId}", hidden);
    expect((await call("GET", `/api/jobs/${executionId}`)).status).toBe(401);
  });
});

describe("Idempotency-Key", () => {
  it("answers a repeat from the first execution, once, and a different body with 409", async () => {
    const idempotencyKey = randomUUID();
    const first = await execute(answering, key, { id: 3 }, { "Idempotency-Key": idempotencyKey });
    const again = await execute(answering, key, { id: 3 }, { "Idempotency-Key": idempotencyKey });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get("x-execution-id")).toBe(first.headers.get("x-execution-id"));
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    const [{ runs }] = await sql<{ runs: number }[]>`select count(*)::int as runs from public.workflow_executions where workflow_id = ${answering} and id = ${first.headers.get("x-execution-id")}`;
    expect(runs).toBe(1);
    const reused = await execute(answering, key, { id: 4 }, { "Idempotency-Key": idempotencyKey });
    expect(reused.status).toBe(409);
    expect(reused.body).toMatchObject({ code: "IDEMPOTENCY_KEY_REUSED" });
    expectDocumented("POST", EXECUTE, reused);
  });

  it("answers a repeated async request with the same job", async () => {
    const idempotencyKey = randomUUID();
    const first = await execute(typed, key, { count: 1 }, { "Idempotency-Key": idempotencyKey, "X-Execution-Mode": "async" });
    const again = await execute(typed, key, { count: 1 }, { "Idempotency-Key": idempotencyKey, "X-Execution-Mode": "async" });
    expect(again.status).toBe(202);
    expect(again.body.executionId).toBe(first.body.executionId);
  });
});

describe("the other endpoints", () => {
  it("report the deployment status, and whether the draft changed since", async () => {
    const path = `/api/workflows/${raw}/status`;
    const before = await call("GET", path, { headers: { "X-API-Key": key } });
    expectDocumented("GET", "/api/workflows/{workflowId}/status", before);
    expect(before.body).toEqual({ isDeployed: true, deployedAt: expect.any(String), deployedVersion: 1, needsRedeployment: false });
    await workspace.members.editor.client.from("workflows").update({ state: new WorkflowBuilder().block("api", "api_trigger", {}, { name: "API" }).build() }).eq("id", raw);
    expect((await call("GET", path, { headers: { "X-API-Key": key } })).body.needsRedeployment).toBe(true);
  });

  it("report usage limits to a key, and to a signed-in user", async () => {
    const byKey = await call("GET", "/api/users/me/usage-limits", { headers: { "X-API-Key": key } });
    expectDocumented("GET", "/api/users/me/usage-limits", byKey);
    expect(byKey.body).toMatchObject({ success: true, rateLimit: { sync: { limit: 1000 }, async: { limit: 1000 }, authType: "api" }, usage: { plan: "enterprise" } });
    const bySession = await call("GET", "/api/users/me/usage-limits", { headers: { Authorization: `Bearer ${workspace.members.editor.accessToken}` } });
    expect(bySession.body).toMatchObject({ rateLimit: { authType: "manual" } });
    expect((await call("GET", "/api/users/me/usage-limits")).status).toBe(401);
  });

  it("record manual runs too, with trigger manual and the draft they ran", async () => {
    const answer = await call("POST", `/api/workflows/${typed}/run`, { headers: { Authorization: `Bearer ${workspace.members.editor.accessToken}` }, body: { input: { count: 2 } } });
    expect(answer.status).toBe(200);
    const row = await record(answer.body.executionId as string);
    expect(row).toMatchObject({ status: "completed", trigger: "manual", deployment_id: null });
    expect(row.snapshot_id).not.toBeNull();
  });
});
