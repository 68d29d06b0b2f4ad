import { describe, expect, it } from "vitest";
import { WorkflowBuilder } from "./state-builder.ts";
import { MAX_STATE_BLOCKS, MAX_STATE_BYTES, MAX_STATE_EDGES, stateCapIssues } from "./state-caps.ts";
import { validateWorkflowState } from "./validate.ts";

function blocks(count: number) {
  const builder = new WorkflowBuilder().block("start", "manual_trigger", {}, { name: "Start" });
  for (let index = 1; index < count; index++) builder.block(`b${index}`, "variables", { assignments: [] });
  return builder.build();
}

describe("state caps", () => {
  it("let a state at every cap through", () => {
    const state = blocks(MAX_STATE_BLOCKS);
    expect(stateCapIssues(state)).toEqual([]);
    expect(validateWorkflowState(state).ok).toBe(true);
  });

  it("refuse a state past a cap with one issue per cap and nothing else", () => {
    const state = { ...blocks(MAX_STATE_BLOCKS + 1), edges: Array.from({ length: MAX_STATE_EDGES + 1 }, () => ({ id: "dup", source: "nowhere", target: "start" })) };
    const result = validateWorkflowState(state);
    expect(result).toEqual({
      ok: false,
      issues: [
        { code: "too_many_blocks", field: "blocks", message: "The workflow has 501 blocks; a workflow may have at most 500" },
        { code: "too_many_edges", field: "edges", message: "The workflow has 2,001 edges; a workflow may have at most 2,000" },
      ],
    });
  });

  it("refuse a state whose JSON is past the size cap, however malformed the rest", () => {
    const issues = stateCapIssues({ blocks: "not even an object", pad: "p".repeat(MAX_STATE_BYTES) });
    expect(issues).toEqual([{ code: "state_too_large", field: "state", message: "The workflow state is more than 2,097,152 characters of JSON; a workflow may have at most 2,097,152" }]);
  });
});
