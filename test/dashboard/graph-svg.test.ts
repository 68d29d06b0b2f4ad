import { describe, expect, it } from "vitest";
import { layoutGraph } from "../../platform/dashboard/workflows/graph-svg.ts";

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
