import { describe, expect, it } from "vitest";
import type { ExecutionResult } from "../engine/context.ts";
import { runResponse } from "./run-response.ts";

function result(overrides: Partial<ExecutionResult>): ExecutionResult {
  return {
    executionId: "run-1",
    success: true,
    status: "success",
    output: { ok: true },
    response: null,
    error: null,
    traceSpans: [],
    context: { blockStates: {}, activePath: [], decisions: { condition: {}, router: {} }, subflows: {}, variables: {}, environment: [] },
    metadata: { trigger: "manual", triggerBlockId: "start", startTime: "2026-01-01T00:00:00.000Z", endTime: "2026-01-01T00:00:00.010Z", durationMs: 10, blocksExecuted: 1 },
    ...overrides,
  };
}

describe("run responses", () => {
  it("answer a successful run with 200 and its output", async () => {
    const response = runResponse(result({}), { includeTrace: false });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ success: true, executionId: "run-1", output: { ok: true }, response: null, metadata: { duration: 10, startTime: "2026-01-01T00:00:00.000Z", endTime: "2026-01-01T00:00:00.010Z", trigger: "manual" } });
  });

  it("answer a failed run with 500 naming the failed block", async () => {
    const block = { id: "f", name: "F", type: "function" };
    const response = runResponse(result({ success: false, status: "error", error: { code: "SANDBOX_TIMEOUT", message: "too slow", block } }), { includeTrace: true });
    expect(response.status).toBe(500);
    expect(await response.json()).toMatchObject({ success: false, code: "EXECUTION_FAILED", errorCode: "SANDBOX_TIMEOUT", error: "too slow", failedBlock: block, traceSpans: [] });
  });

  it("answer a timeout with 408 and bad input with 400", () => {
    expect(runResponse(result({ success: false, status: "timeout", error: { code: "RUN_TIMEOUT", message: "t", block: null } }), { includeTrace: false }).status).toBe(408);
    expect(runResponse(result({ success: false, status: "error", error: { code: "INVALID_INPUT", message: "bad", block: null } }), { includeTrace: false }).status).toBe(400);
  });
});
