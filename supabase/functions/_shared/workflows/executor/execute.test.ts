import { describe, expect, it } from "vitest";
import { WorkflowError } from "../core/errors.ts";
import { runWorkflow } from "../runs/run-workflow.ts";
import { fn, flow, run, spansByName, wait } from "../../../../../test/helpers/workflows/flows.ts";

describe("timeouts, cancellation and the Response block", () => {
  it("times out one block by its own timeout", async () => {
    const builder = flow().block("slow", "wait", { ...wait(2_000), timeoutMs: 50 }, { name: "Slow" }).chain("start", "slow");
    const result = await run(builder);
    expect(result.error).toMatchObject({ code: "BLOCK_TIMEOUT", block: { name: "Slow" } });
    expect(result.error?.message).toContain("timeout of 50 ms");
  });

  it("times out the whole run", async () => {
    const builder = flow().block("slow", "wait", wait(2_000), { name: "Slow" }).chain("start", "slow");
    const started = Date.now();
    const result = await run(builder, { timeoutMs: 80 });
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(result).toMatchObject({ status: "timeout", success: false, error: { code: "RUN_TIMEOUT" } });
  });

  it("treats user code stopped by the run's deadline as a run timeout", async () => {
    const builder = flow().block("spin", "function", fn("while (true) {}"), { name: "Spin" }).chain("start", "spin");
    const result = await run(builder, { timeoutMs: 100 });
    expect(result.status).toBe("timeout");
  });

  it("ends a run cancelled between two blocks as cancelled, not as a success with the rest never run", async () => {
    const controller = new AbortController();
    const builder = flow()
      .block("first", "function", fn("return 1;"), { name: "First" })
      .block("second", "function", fn("return 2;"), { name: "Second" })
      .chain("start", "first", "second");
    // The observer sees First complete before its successors start: cancelling there leaves nothing in flight.
    const result = await run(builder, { signal: controller.signal, onBlockComplete: (span) => span.blockId === "first" && controller.abort() });
    expect(result).toMatchObject({ status: "cancelled", error: { code: "CANCELLED" } });
    expect(spansByName(result.traceSpans).get("Second")).toBeUndefined();
  });

  it("cancels a run through its signal", async () => {
    const controller = new AbortController();
    const builder = flow().block("slow", "wait", wait(2_000), { name: "Slow" }).chain("start", "slow");
    const done = run(builder, { signal: controller.signal });
    setTimeout(() => controller.abort(), 30);
    const result = await done;
    expect(result).toMatchObject({ status: "cancelled", error: { code: "CANCELLED" } });
    expect(spansByName(result.traceSpans).get("Slow")?.[0].status).toBe("cancelled");
  });

  it("ends the run with a Response: status, headers and body, cancelling what still runs", async () => {
    const builder = flow()
      .block("answer", "response", { status: "<start.input.code>", headers: { "X-Trace": "t-<start.input.code>" }, body: { ok: true, n: "<start.input.code>" } }, { name: "Answer" })
      .block("slow", "wait", wait(3_000), { name: "Slow" })
      .edge("start", "answer")
      .edge("start", "slow");
    const started = Date.now();
    const result = await run(builder, { trigger: { kind: "manual", input: { code: 201 } } });
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(result.status).toBe("success");
    expect(result.response).toEqual({ status: 201, headers: { "X-Trace": "t-201" }, body: { ok: true, n: 201 } });
    expect(spansByName(result.traceSpans).get("Slow")?.[0].status).toBe("cancelled");
  });

  it("refuses a Response status outside 100-599", async () => {
    const result = await run(flow().block("answer", "response", { status: "<start.input.code>" }, { name: "Answer" }).chain("start", "answer"), { trigger: { kind: "manual", input: { code: 700 } } });
    expect(result.error?.message).toContain("status must be an HTTP status code");
  });
});

describe("executeWorkflow", () => {
  it("throws typed errors for callers to map", async () => {
    const unbuildable = { blocks: {}, edges: [{ id: "e", source: "a", target: "b" }] };
    const error = await runWorkflow({ workflow: unbuildable, trigger: { kind: "manual" } }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(WorkflowError);
    expect((error as WorkflowError).code).toBe("INVALID_WORKFLOW");
  });
});

describe("secrets in what a run returns", () => {
  const SECRET = "s3cr3t-Value-42";

  it("mask the environment's values in outputs, spans, errors, context and reported spans, while blocks use the real ones", async () => {
    const builder = flow()
      .block("echo", "function", fn("console.log('{{SECRET}}'); return '{{SECRET}}';"), { name: "Echo" })
      .block("check", "function", fn("return { same: <echo.result> === {{SECRET}}, length: <echo.result>.length, url: 'https://x.test/?t=' + encodeURIComponent({{SECRET}}) };"), { name: "Check" })
      .block("keep", "variables", { assignments: [{ name: "token", value: "Bearer {{SECRET}}" }] }, { name: "Keep" })
      .block("fail", "function", fn("throw new Error('refused ' + {{SECRET}});"), { name: "Fail" })
      .chain("start", "echo", "check", "keep", "fail");
    const reported: unknown[] = [];
    const result = await run(builder, { env: { SECRET }, onBlockComplete: (span) => reported.push(span) });
    expect(JSON.stringify(result)).not.toContain(SECRET);
    expect(JSON.stringify(reported)).not.toContain(SECRET);
    const [, echo, check] = result.traceSpans;
    expect(echo.output).toEqual({ result: "***", stdout: "***" });
    // The trace shows the code as written: the variable's name, never its value.
    expect(echo.input).toEqual({ code: "console.log('{{SECRET}}'); return '{{SECRET}}';" });
    expect(check.output).toEqual({ result: { same: true, length: SECRET.length, url: "https://x.test/?t=***" }, stdout: "" });
    expect(result.context.variables).toEqual({ token: "Bearer ***" });
    expect(result.error).toMatchObject({ code: "BLOCK_FAILED", message: 'Block "Fail" (function): Error: refused *** (line 1)' });
  });
});
