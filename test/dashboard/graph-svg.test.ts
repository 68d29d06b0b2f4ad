import { describe, expect, it } from "vitest";
import { edgeLabel, layoutGraph } from "../../platform/dashboard/workflows/graph-svg.ts";
import { runFilterOf, runFilterQuery } from "../../platform/dashboard/workflows/run-filter.ts";
import { durationText } from "../../platform/dashboard/workflows/waterfall.ts";

const block = (type: string) => ({ type });

describe("layoutGraph", () => {
  it("puts each block one column after the longest chain leading to it, beside its sources", () => {
    const layout = layoutGraph({
      blocks: { api: block("api_trigger"), tick: block("schedule"), work: block("function"), greet: block("function"), join: block("function") },
      edges: [{ source: "api", target: "greet" }, { source: "tick", target: "work" }, { source: "greet", target: "join" }, { source: "api", target: "join" }],
    });
    expect(Object.fromEntries(layout.positions)).toEqual({
      api: { column: 0, row: 0 },
      tick: { column: 0, row: 1 },
      greet: { column: 1, row: 0 },
      work: { column: 1, row: 1 },
      join: { column: 2, row: 0 },
    });
    expect([layout.columns, layout.rows]).toEqual([3, 2]);
  });

  it("cuts a cycle where it closes and ignores edges to blocks that do not exist", () => {
    const layout = layoutGraph({
      blocks: { a: block("function"), b: block("function") },
      edges: [{ source: "a", target: "b" }, { source: "b", target: "a" }, { source: "a", target: "ghost" }],
    });
    expect(layout.positions.size).toBe(2);
    const [a, b] = [layout.positions.get("a"), layout.positions.get("b")];
    expect(a?.column).not.toBe(b?.column);
  });
});

describe("edgeLabel", () => {
  const state = {
    blocks: {
      size: { type: "condition", config: { conditions: [{ id: "big", kind: "if", expression: "<api.total> >= 1000" }, { id: "rest", kind: "else" }] } },
      route: { type: "router", config: { value: "<api.country>", routes: [{ id: "br", title: "Brazil", operator: "equals", operand: "BR" }, { id: "us", operator: "equals", operand: "US" }, { id: "other", operator: "default" }] } },
      work: { type: "function" },
    },
    edges: [],
  };

  it("names a Condition's branch by its kind and expression, a Router's by its title or its test", () => {
    expect(edgeLabel(state, { source: "size", target: "work", sourceHandle: "condition-big" })).toBe("if <api.total> >= 1000");
    expect(edgeLabel(state, { source: "size", target: "work", sourceHandle: "condition-rest" })).toBe("else");
    expect(edgeLabel(state, { source: "route", target: "work", sourceHandle: "router-br" })).toBe("Brazil");
    expect(edgeLabel(state, { source: "route", target: "work", sourceHandle: "router-us" })).toBe("equals US");
    expect(edgeLabel(state, { source: "route", target: "work", sourceHandle: "router-other" })).toBe("default");
    expect(edgeLabel(state, { source: "work", target: "size", sourceHandle: "error" })).toBe("error");
    expect(edgeLabel(state, { source: "work", target: "size" })).toBeNull();
    expect(edgeLabel(state, { source: "size", target: "work", sourceHandle: "condition-gone" })).toBe("condition-gone");
  });
});

describe("the runs' search and durations", () => {
  it("turns a checked search into PostgREST filters and refuses values that are not a status, trigger or time", () => {
    const filter = runFilterOf({ status: "failed", trigger: "api", from: "2026-12-01T10:00", to: "2026-12-02T10:00", text: "time out" });
    expect(runFilterQuery(filter)).toBe("&status=eq.failed&trigger=eq.api&created_at=gte.2026-12-01T10%3A00Z&created_at=lte.2026-12-02T10%3A00Z&error_message=ilike.*time%20out*");
    expect(runFilterOf({}).active).toBe(false);
    expect(() => runFilterOf({ status: "lost" })).toThrow("A run's status is one of");
    expect(() => runFilterOf({ trigger: "cron" })).toThrow("A run's trigger is one of");
    expect(() => runFilterOf({ from: "yesterday" })).toThrow("From must be a date and time");
    expect(() => runFilterOf({ from: "2026-12-02T10:00", to: "2026-12-01T10:00" })).toThrow("From must not be after To");
  });

  it("gives every duration its unit", () => {
    expect(durationText(null)).toBe("—");
    expect(durationText(12)).toBe("12 ms");
    expect(durationText(1530)).toBe("1.53 s");
    expect(durationText(125_000)).toBe("2 min 5 s");
  });
});
