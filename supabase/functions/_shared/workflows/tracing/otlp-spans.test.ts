import { describe, expect, it } from "vitest";
import { decodeTraces } from "../../../../../test/helpers/workflows/otlp-receiver.ts";
import { encodeSpans, type ExportedRun, runSpans } from "./otlp-spans.ts";
import { blockSpanId } from "./trace-context.ts";

const run: ExportedRun = {
  executionId: "e1",
  workflowId: "w1",
  workflowName: "Flow",
  workspaceId: "ws1",
  trigger: "api",
  status: "failed",
  startedAt: "2026-01-01T00:00:00.000Z",
  endedAt: "2026-01-01T00:00:01.000Z",
  errorCode: "BLOCK_FAILED",
  errorMessage: "boom",
  costTotal: "0.001",
  traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
  spanId: "1111111111111111",
  parentSpanId: "00f067aa0ba902b7",
  traceState: "vendor=1",
  traceSpans: [
    {
      id: "call", blockId: "call", name: "Call", type: "api", status: "success", startedAt: "2026-01-01T00:00:00.100Z", endedAt: "2026-01-01T00:00:00.300Z", durationMs: 200,
      input: { url: "https://example.com/?key=***", method: "get" },
      output: { status: 200, attempts: [{ attempt: 1, startedAt: "2026-01-01T00:00:00.100Z", durationMs: 150, status: 200 }] },
    },
    {
      id: "loop1", blockId: "loop1", name: "Loop", type: "loop", status: "error", error: "boom", startedAt: "2026-01-01T00:00:00.300Z", endedAt: "2026-01-01T00:00:00.900Z", durationMs: 600,
      children: [{ id: "fn1[loop1:0]", blockId: "fn1", name: "Fn", type: "function", status: "error", error: "boom", errorCode: "BLOCK_FAILED", startedAt: "2026-01-01T00:00:00.300Z", endedAt: "2026-01-01T00:00:00.900Z", durationMs: 600 }],
    },
  ],
};

describe("runSpans and encodeSpans", () => {
  const spans = decodeTraces(encodeSpans(runSpans(run).spans));
  const byName = (name: string) => spans.filter((span) => span.name === name);

  it("makes the root span a child of the caller's span in the caller's trace, with the run's attributes", () => {
    const [root] = byName("workflow.execute");
    expect(root).toMatchObject({ traceId: run.traceId, spanId: run.spanId, parentSpanId: run.parentSpanId, traceState: "vendor=1", kind: 2, status: { code: 2, message: "boom" } });
    expect(root.attributes).toMatchObject({ "orbita.execution.id": "e1", "orbita.workflow.name": "Flow", "orbita.run.status": "failed", "orbita.run.cost": 0.001 });
    expect(root.resource["orbita.workspace.id"]).toBe("ws1");
    expect(root.endNanos - root.startNanos).toBe(1_000_000_000n);
  });

  it("gives each block instance a span under its parent, with the ids the executor's traceparent named", () => {
    const blocks = byName("block.execute");
    expect(blocks.map((span) => span.attributes["orbita.block.id"])).toEqual(["call", "loop1", "fn1"]);
    const fn = blocks[2];
    expect(fn.spanId).toBe(blockSpanId(run.spanId, "fn1[loop1:0]"));
    expect(fn.parentSpanId).toBe(blockSpanId(run.spanId, "loop1"));
    expect(fn.attributes).toMatchObject({ "orbita.block.type": "function", "orbita.block.status": "error", "orbita.block.error": "boom", "orbita.block.error_code": "BLOCK_FAILED" });
    expect(blocks[0].parentSpanId).toBe(run.spanId);
  });

  it("adds an HTTP block's attempts as client spans under the block, keeping the masked URL as stored", () => {
    const [http] = byName("http.request");
    expect(http.parentSpanId).toBe(blockSpanId(run.spanId, "call"));
    expect(http.attributes).toMatchObject({ "http.request.method": "GET", "url.full": "https://example.com/?key=***", "http.response.status_code": 200 });
    expect(http.kind).toBe(3);
  });

  it("caps the spans of a run and counts the rest", () => {
    expect(runSpans(run, 2)).toMatchObject({ dropped: 3 });
    expect(runSpans(run, 2).spans).toHaveLength(2);
  });
});
