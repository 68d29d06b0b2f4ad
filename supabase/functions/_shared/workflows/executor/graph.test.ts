import { describe, expect, it } from "vitest";
import { ValidationError } from "../state/issues.ts";
import { compileWorkflow, planScope, rootPlan } from "./graph.ts";
import { WorkflowBuilder } from "../state/state-builder.ts";

function sample() {
  return new WorkflowBuilder()
    .block("start", "manual_trigger", {}, { name: "Start" })
    .block("hook", "generic_webhook", {}, { name: "Hook" })
    .block("check", "condition", { conditions: [{ id: "yes", kind: "if", expression: "true" }, { id: "no", kind: "else" }] }, { name: "Check" })
    .block("a", "variables", { assignments: [] }, { name: "A" })
    .block("b", "variables", { assignments: [] }, { name: "B" })
    .loop("each", { nodes: ["inner"], loopType: "for", iterations: 2 }, { name: "Each" })
    .block("inner", "function", { code: "return <loop.index>;" }, { name: "Inner" })
    .edge("start", "check")
    .edge("hook", "b")
    .edge("check", "a", "condition-yes")
    .edge("check", "b", "condition-no")
    .edge("a", "each")
    .edge("a", "b", "error")
    .edge("each", "inner", "loop-start")
    .build();
}

describe("compileWorkflow", () => {
  it("splits blocks into the top level and loop bodies with in-scope edges", () => {
    const compiled = compileWorkflow(sample());
    expect(compiled.root.nodes.map((node) => node.id)).toEqual(["start", "hook", "check", "a", "b", "each"]);
    const each = compiled.nodes.get("each");
    expect(each?.subflow?.body.nodes.map((node) => node.id)).toEqual(["inner"]);
    expect(each?.subflow?.plan.entries).toEqual([0]);
    expect(compiled.nodes.get("inner")?.scopeId).toBe("each");
    expect(compiled.nodes.get("check")?.outgoing.map((edge) => edge.rule)).toEqual([
      { on: "choice", field: "selectedOption", id: "yes" },
      { on: "choice", field: "selectedOption", id: "no" },
    ]);
    expect(compiled.nodes.get("a")?.hasErrorEdge).toBe(true);
    expect(compiled.nodes.get("check")?.targets.get("condition-yes")).toEqual([{ id: "a", name: "A", type: "variables" }]);
    expect(compiled.byName.get("inner")?.id).toBe("inner");
    expect([...compiled.nodes.values()].filter((node) => node.isSink).map((node) => node.id)).toEqual(["b", "each", "inner"]);
  });

  it("plans the top level per trigger: unreachable blocks neither run nor are waited for", () => {
    const compiled = compileWorkflow(sample());
    const plan = rootPlan(compiled, compiled.nodes.get("start")!);
    expect([...plan.reachable]).toEqual([1, 0, 1, 1, 1, 1]);
    // b has three incoming edges, but the one from the webhook trigger cannot fire in this run.
    expect(plan.incoming[4]).toBe(2);
    expect(rootPlan(compiled, compiled.nodes.get("start")!)).toBe(plan);
    expect(planScope(compiled.root, [1]).incoming[4]).toBe(1);
  });

  it("applies the state format's defaults", () => {
    const compiled = compileWorkflow({ blocks: { a: { id: "a", type: "manual_trigger", name: "A" } } });
    expect(compiled.state).toEqual({ blocks: { a: { id: "a", type: "manual_trigger", name: "A", config: {}, enabled: true } }, edges: [], loops: {}, parallels: {} });
  });

  it("refuses, as a ValidationError naming the field, a state whose structure it cannot build", () => {
    const refusal = (state: unknown) => {
      try {
        compileWorkflow(state);
      } catch (error) {
        expect(error).toBeInstanceOf(ValidationError);
        return (error as ValidationError).issues.map((issue) => `${issue.code} ${issue.field}`);
      }
      throw new Error("compiled");
    };
    const broken = (change: (state: ReturnType<typeof sample>) => void) => {
      const state = sample();
      change(state);
      return state;
    };
    expect(refusal({ blocks: [], edges: {} })).toEqual(["invalid_shape blocks", "invalid_shape edges"]);
    expect(refusal(broken((state) => void (state.blocks.a.type = "teleport")))).toEqual(["unknown_block_type blocks.a.type"]);
    expect(refusal(broken((state) => void delete state.loops.each))).toEqual(["missing_subflow loops.each"]);
    expect(refusal(broken((state) => void state.edges.push({ id: "x", source: "a", target: "ghost" })))).toEqual(["dangling_edge edges[7].target"]);
    expect(refusal(broken((state) => void state.edges.push({ id: "x", source: "inner", target: "b" })))).toEqual(["cross_scope_edge edges[7].target"]);
    expect(refusal(broken((state) => void state.edges.push({ id: "x", source: "each", target: "b", sourceHandle: "loop-start" })))).toEqual(["cross_scope_edge edges[7].target"]);
  });
});
