import { describe, expect, it } from "vitest";
import type { ExecutionResult } from "../core/context.ts";
import { executeAnswer, manualAnswer, responseHeaders, toHttpResponse } from "./run-response.ts";

function result(overrides: Partial<ExecutionResult>): ExecutionResult {
  return {
    executionId: "run-1",
    success: true,
    status: "success",
    output: { ok: true },
    response: null,
    error: null,
    traceSpans: [],
    modelUsage: [],
    context: { blockStates: {}, activePath: [], decisions: { condition: {}, router: {} }, subflows: {}, variables: {}, environment: [] },
    metadata: { trigger: "api", triggerBlockId: "start", startTime: "2026-01-01T00:00:00.000Z", endTime: "2026-01-01T00:00:00.010Z", durationMs: 10, blocksExecuted: 1 },
    ...overrides,
  };
}

describe("run answers", () => {
  it("answer a successful run with 200, its output and metadata", () => {
    expect(executeAnswer(result({}))).toEqual({ status: 200, headers: {}, body: { success: true, executionId: "run-1", output: { ok: true }, metadata: { duration: 10, startTime: "2026-01-01T00:00:00.000Z", endTime: "2026-01-01T00:00:00.010Z" } } });
  });

  it("apply a Response block's status, headers and body, dropping headers HTTP cannot carry", () => {
    const answer = executeAnswer(result({ response: { status: 201, headers: { "X-Order": "7", "Content-Length": "1", "Bad Name": "x", "X-Split": "a\r\nb" }, body: { id: 7 } } }));
    expect(answer).toEqual({ status: 201, headers: { "X-Order": "7" }, body: { id: 7 } });
    expect(executeAnswer(result({ response: { status: 101, headers: {}, body: null } })).body).toMatchObject({ code: "INVALID_RESPONSE" });
  });

  it("answer a failed run with 500 naming the failed block, a timeout 408 and refused input 400", () => {
    const block = { id: "f", name: "F", type: "function" };
    expect(executeAnswer(result({ success: false, status: "error", error: { code: "SANDBOX_TIMEOUT", message: "too slow", block } }))).toMatchObject({
      status: 500, body: { success: false, code: "EXECUTION_FAILED", errorCode: "SANDBOX_TIMEOUT", error: "too slow", failedBlock: block },
    });
    expect(executeAnswer(result({ success: false, status: "timeout", error: { code: "RUN_TIMEOUT", message: "t", block: null } })).status).toBe(408);
    expect(executeAnswer(result({ success: false, status: "error", error: { code: "INVALID_INPUT", message: "bad", block: null } })).status).toBe(400);
  });

  it("show a manual run the Response block's settings, the trace and the context", () => {
    const answer = manualAnswer(result({ response: { status: 201, headers: {}, body: 1 } }));
    expect(answer).toMatchObject({ status: 200, body: { success: true, response: { status: 201 }, traceSpans: [], metadata: { trigger: "api" } } });
  });

  it("send text bodies as text when the Response block says so, and no body for 204", async () => {
    const text = toHttpResponse({ status: 200, headers: { "Content-Type": "text/csv" }, body: "a,b" }, { "X-Execution-Id": "run-1" });
    expect(await text.text()).toBe("a,b");
    expect(text.headers.get("x-execution-id")).toBe("run-1");
    expect((await toHttpResponse({ status: 200, headers: {}, body: "a,b" }).text())).toBe('"a,b"');
    expect(toHttpResponse({ status: 204, headers: {}, body: { x: 1 } }).body).toBeNull();
    expect(responseHeaders({ "X-Count": 3 })).toEqual({ "X-Count": "3" });
  });
});
