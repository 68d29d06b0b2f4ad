import { describe, expect, it } from "vitest";
import { ValidationError, type IssueCode, type ValidationIssue } from "./issues.ts";
import { WorkflowBuilder } from "./state-builder.ts";
import type { WorkflowState } from "./state-schema.ts";
import { parseWorkflowState, validateWorkflowState } from "./validate.ts";

/** A valid state touching every rule: triggers, a condition, a loop holding a parallel, references. */
function valid(): WorkflowState {
  return new WorkflowBuilder()
    .block("api", "api_trigger", { inputFormat: [{ name: "items", type: "json", value: [1, 2] }] }, { name: "API" })
    .block("check", "condition", { conditions: [{ id: "many", kind: "if", expression: "<api.items>.length > 1" }, { id: "few", kind: "else" }] }, { name: "Check" })
    .loop("each", { nodes: ["fan"], loopType: "forEach", forEachItems: "<api.items>" }, { name: "Each" })
    .parallel("fan", { nodes: ["work"], parallelType: "count", count: 2 }, { name: "Fan" })
    .block("work", "function", { code: "return <each.item> * <parallel.index> + <loop.index>;" }, { name: "Work" })
    .block("done", "response", { body: "<each.results>" }, { name: "Done" })
    .block("few", "response", { status: 422, body: { error: "need more items" } }, { name: "Few" })
    .edge("api", "check")
    .edge("check", "each", "condition-many")
    .edge("check", "few", "condition-few")
    .edge("each", "fan", "loop-start")
    .edge("fan", "work", "parallel-start")
    .edge("each", "done")
    .build();
}

function issuesOf(state: unknown, mode: "save" | "deploy" = "save"): ValidationIssue[] {
  const result = validateWorkflowState(state, mode);
  return result.ok ? [] : result.issues;
}

function expectIssue(state: unknown, code: IssueCode, where: Partial<ValidationIssue>, mode: "save" | "deploy" = "save"): ValidationIssue {
  const issues = issuesOf(state, mode);
  const matches = (issue: ValidationIssue) => Object.entries(where).every(([key, value]) => issue[key as keyof ValidationIssue] === value);
  const found = issues.find((issue) => issue.code === code && matches(issue));
  expect(found, `expected ${code} ${JSON.stringify(where)} among ${JSON.stringify(issues, null, 1)}`).toBeDefined();
  return found as ValidationIssue;
}

describe("a valid state", () => {
  it("passes in save and deploy mode, with defaults applied", () => {
    expect(issuesOf(valid(), "deploy")).toEqual([]);
    const parsed = parseWorkflowState({ blocks: { a: { id: "a", type: "manual_trigger", name: "A" } } });
    expect(parsed).toEqual({ blocks: { a: { id: "a", type: "manual_trigger", name: "A", config: {}, enabled: true } }, edges: [], loops: {}, parallels: {} });
  });

  it("accepts an empty draft on save but not on deploy", () => {
    expect(issuesOf({})).toEqual([]);
    expectIssue({}, "no_trigger", { field: "blocks" }, "deploy");
  });
});

describe("shape and config", () => {
  it("names the field of a malformed state", () => {
    const state = valid() as unknown as { blocks: Record<string, Record<string, unknown>> };
    state.blocks.work.enabled = "yes";
    expectIssue(state, "invalid_shape", { field: "blocks.work.enabled", message: "Workflow state: blocks.work.enabled must be a boolean" });
    expectIssue({ blocks: [], edges: {} }, "invalid_shape", { field: "blocks" });
  });

  it("refuses unknown block types, naming the block", () => {
    const state = valid();
    state.blocks.work.type = "teleport";
    expectIssue(state, "unknown_block_type", { blockId: "work", blockName: "Work", field: "blocks.work.type" });
  });

  it("names the block and the config field that is wrong", () => {
    const state = valid();
    state.blocks.work.config = { code: 42, timeoutMs: 0, extra: true };
    const issues = issuesOf(state).filter((issue) => issue.code === "invalid_config");
    expect(issues.map((issue) => issue.field).sort()).toEqual(["blocks.work.config.code", "blocks.work.config.extra", "blocks.work.config.timeoutMs"]);
    expect(issues.map((issue) => issue.message).sort()).toEqual([
      'Block "Work" (function): blocks.work.config.code must be a string',
      'Block "Work" (function): blocks.work.config.extra is not a known field',
      'Block "Work" (function): blocks.work.config.timeoutMs must be at least 1',
    ]);
  });

  it("reports a missing required config field", () => {
    const state = valid();
    state.blocks.work.config = {};
    expectIssue(state, "invalid_config", { field: "blocks.work.config.code", message: 'Block "Work" (function): blocks.work.config.code is required' });
  });

  it.each([
    [[{ id: "a", kind: "else if", expression: "x" }], "conditions[0].kind", "the first condition must be"],
    [[{ id: "a", kind: "if", expression: "x" }, { id: "b", kind: "else" }, { id: "c", kind: "else if", expression: "y" }], "conditions[1].kind", '"else" must be the last'],
    [[{ id: "a", kind: "if", expression: " " }], "conditions[0].expression", "needs an expression"],
    [[{ id: "a", kind: "if", expression: "x" }, { id: "a", kind: "else" }], "conditions[1].id", "used twice"],
    [[{ id: "a", kind: "if", expression: "x" }, { id: "b", kind: "else", expression: "y" }], "conditions[1].expression", "takes no expression"],
  ])("checks the order and ids of conditions (%#)", (conditions, field, message) => {
    const state = valid();
    state.blocks.check.config = { conditions };
    state.edges = state.edges.filter((edge) => edge.source !== "check");
    const issue = expectIssue(state, "invalid_block_config", { blockId: "check", field: `blocks.check.config.${field}` });
    expect(issue.message).toContain(message);
  });

  it("checks routes: a default route last, operands where needed, unique ids", () => {
    const state = new WorkflowBuilder()
      .block("start", "manual_trigger")
      .block("route", "router", {
        value: "x",
        routes: [
          { id: "a", operator: "default" },
          { id: "b", operator: "equals" },
          { id: "b", operator: "exists" },
        ],
      })
      .edge("start", "route")
      .build();
    const fields = issuesOf(state).map((issue) => `${issue.code} ${issue.field}`);
    expect(fields).toEqual([
      "invalid_block_config blocks.route.config.routes[2].id",
      "invalid_block_config blocks.route.config.routes[0].operator",
      "invalid_block_config blocks.route.config.routes[1].operand",
    ]);
  });

  it("checks Input Format names", () => {
    const state = valid();
    state.blocks.api.config = { inputFormat: [{ name: "input", type: "string" }, { name: "a", type: "number" }, { name: "a", type: "string" }, { name: "b c", type: "string" }] };
    const fields = issuesOf(state).map((issue) => `${issue.code} ${issue.field}`);
    expect(fields).toContain("invalid_config blocks.api.config.inputFormat[3].name");
    const fixed = valid();
    fixed.blocks.api.config = { inputFormat: [{ name: "input", type: "string" }, { name: "a", type: "number" }, { name: "a", type: "string" }] };
    expect(issuesOf(fixed).map((issue) => `${issue.code} ${issue.field}`)).toEqual(["invalid_block_config blocks.api.config.inputFormat[2].name", "invalid_block_config blocks.api.config.inputFormat[0].name"]);
  });
});

describe("names", () => {
  it("refuses a block whose key differs from its id", () => {
    const state = valid();
    state.blocks.work.id = "other";
    expectIssue(state, "block_id_mismatch", { blockId: "other", field: "blocks.work.id" });
  });

  it("refuses names that clash once normalised, are reserved or cannot be referenced", () => {
    const state = valid();
    state.blocks.few.name = "c HECK";
    expectIssue(state, "duplicate_block_name", { blockId: "few", field: "blocks.few.name" });
    state.blocks.few.name = "Loop";
    expectIssue(state, "reserved_block_name", { blockId: "few" });
    state.blocks.few.name = "Step #1";
    expectIssue(state, "invalid_block_name", { blockId: "few" });
  });
});

describe("edges", () => {
  function withEdge(edge: Record<string, unknown>): WorkflowState {
    const state = valid();
    state.edges.push({ id: "extra", source: "api", target: "done", ...edge } as WorkflowState["edges"][number]);
    return state;
  }

  it("refuses dangling edges, naming the missing end", () => {
    expectIssue(withEdge({ target: "ghost" }), "dangling_edge", { edgeId: "extra", blockId: "api", field: "edges[6].target" });
    expectIssue(withEdge({ source: "ghost" }), "dangling_edge", { edgeId: "extra", field: "edges[6].source" });
  });

  it("refuses duplicate ids, duplicate connections and self-loops", () => {
    expectIssue(withEdge({ id: "api->check" }), "duplicate_edge_id", { field: "edges[6].id" });
    expectIssue(withEdge({ target: "check" }), "duplicate_edge", { field: "edges[6].target" });
    expectIssue(withEdge({ target: "api" }), "self_edge", { blockId: "api" });
  });

  it("checks handles against their source block", () => {
    expectIssue(withEdge({ source: "check", target: "done", sourceHandle: "condition-ghost" }), "invalid_edge_handle", { blockId: "check", field: "edges[6].sourceHandle" });
    expectIssue(withEdge({ source: "check", target: "done" }), "invalid_edge_handle", { blockId: "check" });
    expectIssue(withEdge({ sourceHandle: "error" }), "invalid_edge_handle", { blockId: "api" });
    expectIssue(withEdge({ sourceHandle: "loop-start" }), "invalid_edge_handle", { blockId: "api" });
    expectIssue(withEdge({ sourceHandle: "sideways" }), "invalid_edge_handle", { blockId: "api" });
  });

  it("refuses edges into triggers and out of a Response", () => {
    const into = valid();
    into.blocks.hook = { id: "hook", type: "generic_webhook", name: "Hook", config: {}, enabled: true };
    into.edges.push({ id: "in", source: "api", target: "hook" });
    expectIssue(into, "trigger_has_incoming_edge", { edgeId: "in" });
    const out = valid();
    out.edges.push({ id: "out", source: "done", target: "few" });
    expectIssue(out, "response_has_outgoing_edge", { edgeId: "out", blockId: "done" });
  });

  it("refuses cycles outside loops, naming the blocks", () => {
    const state = new WorkflowBuilder()
      .block("start", "manual_trigger")
      .block("a", "variables", { assignments: [] }, { name: "A" })
      .block("b", "variables", { assignments: [] }, { name: "B" })
      .chain("start", "a", "b", "a")
      .build();
    const issue = expectIssue(state, "cycle", { blockId: "a", field: "blocks.a" });
    expect(issue.message).toContain('cycle through "A", "B"');
  });

  it("refuses edges crossing a body's border", () => {
    const state = valid();
    state.edges.push({ id: "out", source: "work", target: "done" });
    expectIssue(state, "cross_scope_edge", { edgeId: "out", blockId: "work" });
    const start = valid();
    start.edges.push({ id: "deep", source: "each", target: "work", sourceHandle: "loop-start" });
    expectIssue(start, "cross_scope_edge", { edgeId: "deep", blockId: "each" });
  });
});

describe("triggers, loops and parallels", () => {
  it("allows one API trigger only", () => {
    const state = valid();
    state.blocks.api2 = { id: "api2", type: "api_trigger", name: "API 2", config: {}, enabled: true };
    expectIssue(state, "multiple_api_triggers", { blockId: "api2", field: "blocks.api2.type" });
  });

  it("pairs loop and parallel blocks with their settings", () => {
    const state = valid();
    delete state.loops.each;
    expectIssue(state, "missing_subflow", { blockId: "each", field: "loops.each" });
    const orphan = valid();
    orphan.parallels.ghost = { nodes: [], parallelType: "count", count: 1 };
    expectIssue(orphan, "missing_subflow", { field: "parallels.ghost" });
  });

  it("checks a body's members", () => {
    const state = valid();
    state.loops.each.nodes = ["fan", "ghost", "each"];
    expectIssue(state, "subflow_member", { blockId: "each", field: "loops.each.nodes[1]" });
    expectIssue(state, "subflow_member", { blockId: "each", field: "loops.each.nodes[2]" });
    const twice = valid();
    twice.parallels.fan.nodes = ["work"];
    twice.loops.each.nodes = ["fan", "work"];
    expectIssue(twice, "subflow_member", { blockId: "fan", field: "parallels.fan.nodes[0]" });
    const circle = valid();
    circle.parallels.fan.nodes = ["work", "each"];
    expectIssue(circle, "subflow_member", { blockId: "each", field: "loops.each.nodes" });
    expectIssue(circle, "subflow_member", { blockId: "fan", field: "parallels.fan.nodes" });
  });

  it("keeps triggers and Responses out of bodies", () => {
    const state = valid();
    state.parallels.fan.nodes = ["work", "few"];
    expectIssue(state, "misplaced_block", { blockId: "few", field: "parallels.fan.nodes[1]" });
  });

  it("needs the setting each loop and parallel type reads", () => {
    const state = valid();
    state.loops.each = { nodes: ["fan"], loopType: "for" };
    state.parallels.fan = { nodes: ["work"], parallelType: "collection" };
    expectIssue(state, "invalid_subflow", { blockId: "each", field: "loops.each.iterations" });
    expectIssue(state, "invalid_subflow", { blockId: "fan", field: "parallels.fan.distribution" });
    const tooMany = valid() as unknown as { loops: Record<string, Record<string, unknown>> };
    tooMany.loops.each = { nodes: ["fan"], loopType: "for", iterations: 1001 };
    expectIssue(tooMany, "invalid_shape", { field: "loops.each.iterations" });
  });

  it("needs a start edge into every body", () => {
    const state = valid();
    state.edges = state.edges.filter((edge) => edge.sourceHandle !== "parallel-start");
    expectIssue(state, "subflow_without_start", { blockId: "fan", field: "parallels.fan" });
  });
});

describe("references", () => {
  function reading(value: string, patch?: (state: WorkflowState) => void): WorkflowState {
    const state = valid();
    state.blocks.work.config = { code: `return ${value};` };
    patch?.(state);
    return state;
  }

  it("accepts upstream blocks, enclosing loops, <api.*> and variables that some block sets", () => {
    expect(issuesOf(reading("<check.selectedOption> + <each.index> + <fan.index> + <parallel.item>"))).toEqual([]);
    const state = reading("<variable.total>", (draft) => {
      draft.blocks.set = { id: "set", type: "variables", name: "Set", config: { assignments: [{ name: "total", value: 1 }] }, enabled: true };
      draft.edges.push({ id: "s", source: "api", target: "set" });
    });
    expect(issuesOf(state)).toEqual([]);
  });

  it("refuses a reference to no block, naming the reference", () => {
    const issue = expectIssue(reading("<nothing.value>"), "unknown_reference", { blockId: "work", field: "blocks.work.config.code" });
    expect(issue.message).toBe('Block "Work" (function): <nothing.value> names no block (block names are lower-cased, without spaces)');
    expectIssue(reading("<variable.unset>"), "unknown_reference", { blockId: "work" });
    expectIssue(reading("<loop.results>"), "unknown_reference", { blockId: "work" });
  });

  it("refuses a reference to a block that does not run before it", () => {
    expectIssue(reading("<done.data>"), "reference_not_upstream", { blockId: "work" });
    expectIssue(reading("<work.result>"), "reference_not_upstream", { blockId: "work" });
    expectIssue(reading("<each.results>"), "reference_not_upstream", { blockId: "work" });
  });

  it("refuses reading a body block from outside its loop", () => {
    const state = valid();
    state.blocks.done.config = { body: "<work.result>" };
    const issue = expectIssue(state, "reference_into_subflow", { blockId: "done", field: "blocks.done.config.body" });
    expect(issue.message).toContain("<fan.results>");
  });

  it("refuses <loop.*> and <parallel.*> outside a loop or parallel", () => {
    const state = valid();
    state.blocks.done.config = { body: "<loop.index> <parallel.item>" };
    expect(issuesOf(state).filter((issue) => issue.code === "reference_outside_subflow")).toHaveLength(2);
  });

  it("checks references in loop and parallel settings too", () => {
    const state = valid();
    state.loops.each.forEachItems = "<work.result>";
    expectIssue(state, "reference_into_subflow", { blockId: "each", field: "loops.each.forEachItems" });
  });
});

describe("parseWorkflowState", () => {
  it("throws a ValidationError carrying every issue", () => {
    const state = valid();
    state.blocks.work.type = "nope";
    state.edges.push({ id: "x", source: "a", target: "b" });
    let caught: unknown;
    try {
      parseWorkflowState(state);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ValidationError);
    expect((caught as ValidationError).code).toBe("INVALID_WORKFLOW");
    expect((caught as ValidationError).issues.length).toBeGreaterThanOrEqual(2);
    expect((caught as ValidationError).message).toMatch(/and \d+ more issue/);
  });
});
