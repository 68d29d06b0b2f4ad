import { describe, expect, it } from "vitest";
import { emptyWorkflowState, workflowStateSchema } from "./state-schema.ts";

describe("the workflow state schema", () => {
  it("fills defaults so an empty object is an empty workflow", () => {
    expect(workflowStateSchema.parse({})).toEqual(emptyWorkflowState());
  });

  it("accepts Sim's shape, with an optional layout position", () => {
    const state = {
      blocks: { a: { id: "a", type: "manual_trigger", name: "Start", config: {}, enabled: true, position: { x: 1, y: 2 } } },
      edges: [{ id: "e", source: "a", target: "b", sourceHandle: null }],
      loops: { l: { nodes: [], loopType: "for", iterations: "<api.n>" } },
      parallels: { p: { nodes: [], parallelType: "collection", distribution: [1] } },
    };
    expect(workflowStateSchema.safeParse(state).success).toBe(true);
  });

  it("refuses unknown keys and blank names", () => {
    expect(workflowStateSchema.safeParse({ blocks: {}, extra: 1 }).success).toBe(false);
    expect(workflowStateSchema.safeParse({ blocks: { a: { id: "a", type: "x", name: "  " } } }).success).toBe(false);
  });
});
