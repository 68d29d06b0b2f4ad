import { describe, expect, it } from "vitest";
import { WorkflowBuilder } from "./state-builder.ts";

describe("WorkflowBuilder", () => {
  it("writes the state format the editor saves", () => {
    const state = new WorkflowBuilder()
      .block("start", "manual_trigger", {}, { name: "Start" })
      .loop("each", { nodes: ["double"], loopType: "forEach", forEachItems: [1, 2] }, { name: "Each" })
      .block("double", "function", { code: "return <loop.item> * 2;" })
      .edge("start", "each")
      .edge("each", "double", "loop-start")
      .build();
    expect(state.blocks.start).toEqual({ id: "start", type: "manual_trigger", name: "Start", config: {}, enabled: true });
    expect(state.loops.each).toEqual({ nodes: ["double"], loopType: "forEach", forEachItems: [1, 2] });
    expect(state.edges).toEqual([
      { id: "start->each", source: "start", target: "each" },
      { id: "each->double:loop-start", source: "each", target: "double", sourceHandle: "loop-start" },
    ]);
  });

  it("chains blocks and hands out independent copies", () => {
    const builder = new WorkflowBuilder().block("a", "manual_trigger").block("b", "variables", { assignments: [] }).chain("a", "b");
    const first = builder.build();
    first.edges.length = 0;
    expect(builder.build().edges).toHaveLength(1);
  });
});
