import { describe, expect, it } from "vitest";
import type { ExecutionSnapshot, TraceSpan } from "../core/context.ts";
import { MAX_TRACE_CHARS, MAX_TRACE_VALUE_CHARS, TRACE_PREVIEW_CHARS } from "../core/limits.ts";
import { budgetContext, budgetTrace, shortenValue } from "./trace-budget.ts";

function span(id: string, extra: Partial<TraceSpan> = {}): TraceSpan {
  return { id, blockId: id, name: id, type: "variables", status: "success", startedAt: "2026-01-01T00:00:00.000Z", endedAt: "2026-01-01T00:00:00.001Z", durationMs: 1, ...extra };
}

function count(spans: TraceSpan[]): number {
  return spans.reduce((sum, item) => sum + 1 + count(item.children ?? []), 0);
}

describe("the trace's budget", () => {
  it("leaves values within the budget as they are", () => {
    const value = { list: [1, 2, 3], text: "short" };
    expect(shortenValue(value)).toBe(value);
    expect(shortenValue("x".repeat(MAX_TRACE_VALUE_CHARS))).toBe("x".repeat(MAX_TRACE_VALUE_CHARS));
  });

  it("replaces a longer value with its size and the start of its JSON", () => {
    const value = { data: "d".repeat(100_000) };
    const marker = shortenValue(value);
    expect(marker).toEqual({ __truncated: true, chars: JSON.stringify(value).length, preview: JSON.stringify(value).slice(0, TRACE_PREVIEW_CHARS) });
  });

  it("keeps a small trace whole, values shortened, the spans given untouched", () => {
    const big = "b".repeat(MAX_TRACE_VALUE_CHARS * 2);
    const spans = [span("a", { input: { big }, output: { ok: true } }), span("b")];
    const kept = budgetTrace(spans);
    expect(kept.map((item) => item.id)).toEqual(["a", "b"]);
    expect(kept[0].input).toMatchObject({ __truncated: true });
    expect(kept[0].output).toEqual({ ok: true });
    expect(spans[0].input).toEqual({ big });
  });

  it("cuts the deepest spans past the budget, counting them where they were cut, within the budget", () => {
    const filler = "f".repeat(4_000);
    const iterations = Array.from({ length: 1_000 }, (_, index) => span(`it${index}`, { type: "loop-iteration", children: [span(`note${index}`, { output: { filler } })] }));
    const spans = [span("start"), span("loop", { type: "loop", children: iterations }), span("after")];
    const kept = budgetTrace(spans);
    expect(kept.map((item) => item.id)).toEqual(["start", "loop", "after"]);
    expect(JSON.stringify(kept).length).toBeLessThanOrEqual(MAX_TRACE_CHARS);
    const notes = (list: TraceSpan[]): number => list.reduce((sum, item) => sum + (item.cut?.spans ?? 0) + notes(item.children ?? []), 0);
    expect(count(kept) + notes(kept)).toBe(count(spans));
    // Every iteration span fits; the blocks inside the later ones are what was cut.
    expect(kept[1].children).toHaveLength(1_000);
    expect(notes(kept)).toBeGreaterThan(0);
  });

  it("ends the top-level list with a marker when top-level spans themselves are cut", () => {
    const filler = "t".repeat(MAX_TRACE_VALUE_CHARS - 100);
    const spans = Array.from({ length: 400 }, (_, index) => span(`s${index}`, { input: filler, output: filler }));
    const kept = budgetTrace(spans);
    const marker = kept.at(-1) as TraceSpan;
    expect(marker).toMatchObject({ type: "truncated", cut: { spans: 400 - (kept.length - 1) } });
    expect(marker.name).toMatch(/^\d+ more spans cut: the trace passed its budget of 2,097,152 characters$/);
    expect(JSON.stringify(kept).length).toBeLessThanOrEqual(MAX_TRACE_CHARS);
  });

  it("shortens the context's outputs and variables the same way", () => {
    const context: ExecutionSnapshot = {
      blockStates: { a: { status: "success", output: { big: "x".repeat(MAX_TRACE_VALUE_CHARS) } }, b: { status: "skipped" } },
      activePath: ["a"],
      decisions: { condition: {}, router: {} },
      subflows: {},
      variables: { small: 1, large: "y".repeat(MAX_TRACE_VALUE_CHARS + 1) },
      environment: [],
    };
    const budgeted = budgetContext(context);
    expect(budgeted.blockStates.a.output).toMatchObject({ __truncated: true });
    expect(budgeted.blockStates.b).toEqual({ status: "skipped" });
    expect(budgeted.variables).toMatchObject({ small: 1, large: { __truncated: true } });
  });
});
