/**
 * The rules of the database's validator (workflows_private.state_issues), one by one: what each
 * refuses, naming the block (or edge) and the field, and what it accepts. The corpus
 * (validation-corpus.test.ts) checks whole answers; this names the rule behind each.
 */
import { afterAll, describe, expect, it } from "vitest";
import { ValidationError, type IssueCode, type ValidationIssue } from "../../supabase/functions/_shared/workflows/state/issues.ts";
import { WorkflowBuilder } from "../../supabase/functions/_shared/workflows/state/state-builder.ts";
import type { WorkflowState } from "../../supabase/functions/_shared/workflows/state/state-schema.ts";
import { sqlValidator, type ValidationMode } from "../helpers/workflows/sql-validator.ts";

const validator = sqlValidator();
afterAll(() => validator.close());

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

function issuesOf(state: unknown, mode: ValidationMode = "save"): Promise<ValidationIssue[]> {
  return validator.stateIssues(state, mode);
}

async function expectIssue(state: unknown, code: IssueCode, where: Partial<ValidationIssue>, mode: ValidationMode = "save"): Promise<ValidationIssue> {
  const issues = await issuesOf(state, mode);
  const matches = (issue: ValidationIssue) => Object.entries(where).every(([key, value]) => issue[key as keyof ValidationIssue] === value);
  const found = issues.find((issue) => issue.code === code && matches(issue));
  expect(found, `expected ${code} ${JSON.stringify(where)} among ${JSON.stringify(issues, null, 1)}`).toBeDefined();
  return found as ValidationIssue;
}

describe("a valid state", () => {
  it("passes in save and deploy mode", async () => {
    expect(await issuesOf(valid(), "save")).toEqual([]);
    expect(await issuesOf(valid(), "deploy")).toEqual([]);
  });

  it("is what WorkflowBuilder writes, loops included", async () => {
    const state = new WorkflowBuilder()
      .block("start", "manual_trigger", {}, { name: "Start" })
      .loop("each", { nodes: ["double"], loopType: "forEach", forEachItems: [1, 2] }, { name: "Each" })
      .block("double", "function", { code: "return <loop.item> * 2;" })
      .edge("start", "each")
      .edge("each", "double", "loop-start")
      .build();
    expect(await issuesOf(state, "deploy")).toEqual([]);
  });

  it("accepts an empty draft on save but not on deploy", async () => {
    expect(await issuesOf({})).toEqual([]);
    await expectIssue({}, "no_trigger", { field: "blocks" }, "deploy");
  });
});

describe("shape and config", () => {
  it("names the field of a malformed state", async () => {
    const state = valid() as unknown as { blocks: Record<string, Record<string, unknown>> };
    state.blocks.work.enabled = "yes";
    await expectIssue(state, "invalid_shape", { field: "blocks.work.enabled", message: "Workflow state: blocks.work.enabled must be a boolean" });
    await expectIssue({ blocks: [], edges: {} }, "invalid_shape", { field: "blocks" });
  });

  it("refuses unknown block types, naming the block", async () => {
    const state = valid();
    state.blocks.work.type = "teleport";
    await expectIssue(state, "unknown_block_type", { blockId: "work", blockName: "Work", field: "blocks.work.type" });
  });

  it("names the block and the config field that is wrong", async () => {
    const state = valid();
    state.blocks.work.config = { code: 42, timeoutMs: 0, extra: true };
    const issues = (await issuesOf(state)).filter((issue) => issue.code === "invalid_config");
    expect(issues.map((issue) => issue.field).sort()).toEqual(["blocks.work.config.code", "blocks.work.config.extra", "blocks.work.config.timeoutMs"]);
    expect(issues.map((issue) => issue.message).sort()).toEqual([
      'Block "Work" (function): blocks.work.config.code must be a string',
      'Block "Work" (function): blocks.work.config.extra is not a known field',
      'Block "Work" (function): blocks.work.config.timeoutMs must be at least 1',
    ]);
  });

  it("reports a missing required config field", async () => {
    const state = valid();
    state.blocks.work.config = {};
    await expectIssue(state, "invalid_config", { field: "blocks.work.config.code", message: 'Block "Work" (function): blocks.work.config.code is required' });
  });

  it.each([
    [[{ id: "a", kind: "else if", expression: "x" }], "conditions[0].kind", "the first condition must be"],
    [[{ id: "a", kind: "if", expression: "x" }, { id: "b", kind: "else" }, { id: "c", kind: "else if", expression: "y" }], "conditions[1].kind", '"else" must be the last'],
    [[{ id: "a", kind: "if", expression: " " }], "conditions[0].expression", "needs an expression"],
    [[{ id: "a", kind: "if", expression: "x" }, { id: "a", kind: "else" }], "conditions[1].id", "used twice"],
    [[{ id: "a", kind: "if", expression: "x" }, { id: "b", kind: "else", expression: "y" }], "conditions[1].expression", "takes no expression"],
  ])("checks the order and ids of conditions (%#)", async (conditions, field, message) => {
    const state = valid();
    state.blocks.check.config = { conditions };
    state.edges = state.edges.filter((edge) => edge.source !== "check");
    const issue = await expectIssue(state, "invalid_block_config", { blockId: "check", field: `blocks.check.config.${field}` });
    expect(issue.message).toContain(message);
  });

  it("checks routes: a default route last, operands where needed, unique ids", async () => {
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
    const fields = (await issuesOf(state)).map((issue) => `${issue.code} ${issue.field}`);
    expect(fields).toEqual([
      "invalid_block_config blocks.route.config.routes[2].id",
      "invalid_block_config blocks.route.config.routes[0].operator",
      "invalid_block_config blocks.route.config.routes[1].operand",
    ]);
  });

  it("checks Input Format names", async () => {
    const state = valid();
    state.blocks.api.config = { inputFormat: [{ name: "input", type: "string" }, { name: "a", type: "number" }, { name: "a", type: "string" }, { name: "b c", type: "string" }] };
    const fields = (await issuesOf(state)).map((issue) => `${issue.code} ${issue.field}`);
    expect(fields).toContain("invalid_config blocks.api.config.inputFormat[3].name");
    const fixed = valid();
    fixed.blocks.api.config = { inputFormat: [{ name: "input", type: "string" }, { name: "a", type: "number" }, { name: "a", type: "string" }] };
    expect((await issuesOf(fixed)).map((issue) => `${issue.code} ${issue.field}`)).toEqual(["invalid_block_config blocks.api.config.inputFormat[2].name", "invalid_block_config blocks.api.config.inputFormat[0].name"]);
  });
});

describe("names", () => {
  it("refuses a block whose key differs from its id", async () => {
    const state = valid();
    state.blocks.work.id = "other";
    await expectIssue(state, "block_id_mismatch", { blockId: "other", field: "blocks.work.id" });
  });

  it("refuses names that clash once normalised, are reserved or cannot be referenced", async () => {
    const state = valid();
    state.blocks.few.name = "c HECK";
    await expectIssue(state, "duplicate_block_name", { blockId: "few", field: "blocks.few.name" });
    state.blocks.few.name = "Loop";
    await expectIssue(state, "reserved_block_name", { blockId: "few" });
    state.blocks.few.name = "Step #1";
    await expectIssue(state, "invalid_block_name", { blockId: "few" });
  });

  it("accepts letters, digits, '_' and '-' once normalised, and reserves the heads that address the run's own state", async () => {
    const named = (name: string) => {
      const state = valid();
      state.blocks.few.name = name;
      return state;
    };
    expect(await issuesOf(named("Send-Mail_1"))).toEqual([]);
    await expectIssue(named("a.b"), "invalid_block_name", { blockId: "few" });
    for (const reserved of ["Loop", "Parallel", "Variable"]) await expectIssue(named(reserved), "reserved_block_name", { blockId: "few" });
  });
});

describe("edges", () => {
  function withEdge(edge: Record<string, unknown>): WorkflowState {
    const state = valid();
    state.edges.push({ id: "extra", source: "api", target: "done", ...edge } as WorkflowState["edges"][number]);
    return state;
  }

  it("refuses dangling edges, naming the missing end", async () => {
    await expectIssue(withEdge({ target: "ghost" }), "dangling_edge", { edgeId: "extra", blockId: "api", field: "edges[6].target" });
    await expectIssue(withEdge({ source: "ghost" }), "dangling_edge", { edgeId: "extra", field: "edges[6].source" });
  });

  it("refuses duplicate ids, duplicate connections and self-loops", async () => {
    await expectIssue(withEdge({ id: "api->check" }), "duplicate_edge_id", { field: "edges[6].id" });
    await expectIssue(withEdge({ target: "check" }), "duplicate_edge", { field: "edges[6].target" });
    await expectIssue(withEdge({ target: "api" }), "self_edge", { blockId: "api" });
  });

  it("checks handles against their source block", async () => {
    await expectIssue(withEdge({ source: "check", target: "done", sourceHandle: "condition-ghost" }), "invalid_edge_handle", { blockId: "check", field: "edges[6].sourceHandle" });
    await expectIssue(withEdge({ source: "check", target: "done" }), "invalid_edge_handle", { blockId: "check" });
    await expectIssue(withEdge({ sourceHandle: "error" }), "invalid_edge_handle", { blockId: "api" });
    await expectIssue(withEdge({ sourceHandle: "loop-start" }), "invalid_edge_handle", { blockId: "api" });
    await expectIssue(withEdge({ sourceHandle: "sideways" }), "invalid_edge_handle", { blockId: "api" });
  });

  it("refuses edges into triggers and out of a Response", async () => {
    const into = valid();
    into.blocks.hook = { id: "hook", type: "generic_webhook", name: "Hook", config: {}, enabled: true };
    into.edges.push({ id: "in", source: "api", target: "hook" });
    await expectIssue(into, "trigger_has_incoming_edge", { edgeId: "in" });
    const out = valid();
    out.edges.push({ id: "out", source: "done", target: "few" });
    await expectIssue(out, "response_has_outgoing_edge", { edgeId: "out", blockId: "done" });
  });

  it("refuses cycles outside loops, naming the blocks", async () => {
    const state = new WorkflowBuilder()
      .block("start", "manual_trigger")
      .block("a", "variables", { assignments: [] }, { name: "A" })
      .block("b", "variables", { assignments: [] }, { name: "B" })
      .chain("start", "a", "b", "a")
      .build();
    const issue = await expectIssue(state, "cycle", { blockId: "a", field: "blocks.a" });
    expect(issue.message).toContain('cycle through "A", "B"');
  });

  it("refuses edges crossing a body's border", async () => {
    const state = valid();
    state.edges.push({ id: "out", source: "work", target: "done" });
    await expectIssue(state, "cross_scope_edge", { edgeId: "out", blockId: "work" });
    const start = valid();
    start.edges.push({ id: "deep", source: "each", target: "work", sourceHandle: "loop-start" });
    await expectIssue(start, "cross_scope_edge", { edgeId: "deep", blockId: "each" });
  });
});

describe("triggers, loops and parallels", () => {
  it("allows one API trigger only", async () => {
    const state = valid();
    state.blocks.api2 = { id: "api2", type: "api_trigger", name: "API 2", config: {}, enabled: true };
    await expectIssue(state, "multiple_api_triggers", { blockId: "api2", field: "blocks.api2.type" });
  });

  it("pairs loop and parallel blocks with their settings", async () => {
    const state = valid();
    delete state.loops.each;
    await expectIssue(state, "missing_subflow", { blockId: "each", field: "loops.each" });
    const orphan = valid();
    orphan.parallels.ghost = { nodes: [], parallelType: "count", count: 1 };
    await expectIssue(orphan, "missing_subflow", { field: "parallels.ghost" });
  });

  it("checks a body's members", async () => {
    const state = valid();
    state.loops.each.nodes = ["fan", "ghost", "each"];
    await expectIssue(state, "subflow_member", { blockId: "each", field: "loops.each.nodes[1]" });
    await expectIssue(state, "subflow_member", { blockId: "each", field: "loops.each.nodes[2]" });
    const twice = valid();
    twice.parallels.fan.nodes = ["work"];
    twice.loops.each.nodes = ["fan", "work"];
    await expectIssue(twice, "subflow_member", { blockId: "fan", field: "parallels.fan.nodes[0]" });
    const circle = valid();
    circle.parallels.fan.nodes = ["work", "each"];
    await expectIssue(circle, "subflow_member", { blockId: "each", field: "loops.each.nodes" });
    await expectIssue(circle, "subflow_member", { blockId: "fan", field: "parallels.fan.nodes" });
  });

  it("keeps triggers and Responses out of bodies", async () => {
    const state = valid();
    state.parallels.fan.nodes = ["work", "few"];
    await expectIssue(state, "misplaced_block", { blockId: "few", field: "parallels.fan.nodes[1]" });
  });

  it("needs the setting each loop and parallel type reads", async () => {
    const state = valid();
    state.loops.each = { nodes: ["fan"], loopType: "for" };
    state.parallels.fan = { nodes: ["work"], parallelType: "collection" };
    await expectIssue(state, "invalid_subflow", { blockId: "each", field: "loops.each.iterations" });
    await expectIssue(state, "invalid_subflow", { blockId: "fan", field: "parallels.fan.distribution" });
    const tooMany = valid() as unknown as { loops: Record<string, Record<string, unknown>> };
    tooMany.loops.each = { nodes: ["fan"], loopType: "for", iterations: 1001 };
    await expectIssue(tooMany, "invalid_shape", { field: "loops.each.iterations" });
  });

  it("needs a start edge into every body", async () => {
    const state = valid();
    state.edges = state.edges.filter((edge) => edge.sourceHandle !== "parallel-start");
    await expectIssue(state, "subflow_without_start", { blockId: "fan", field: "parallels.fan" });
  });
});

describe("references", () => {
  function reading(value: string, patch?: (state: WorkflowState) => void): WorkflowState {
    const state = valid();
    state.blocks.work.config = { code: `return ${value};` };
    patch?.(state);
    return state;
  }

  it("accepts upstream blocks, enclosing loops, <api.*> and variables that some block sets", async () => {
    expect(await issuesOf(reading("<check.selectedOption> + <each.index> + <fan.index> + <parallel.item>"))).toEqual([]);
    const state = reading("<variable.total>", (draft) => {
      draft.blocks.set = { id: "set", type: "variables", name: "Set", config: { assignments: [{ name: "total", value: 1 }] }, enabled: true };
      draft.edges.push({ id: "s", source: "api", target: "set" });
    });
    expect(await issuesOf(state)).toEqual([]);
  });

  it("refuses a reference to no block, naming the reference", async () => {
    const issue = await expectIssue(reading("<nothing.value>"), "unknown_reference", { blockId: "work", field: "blocks.work.config.code" });
    expect(issue.message).toBe('Block "Work" (function): <nothing.value> names no block (block names are lower-cased, without spaces)');
    await expectIssue(reading("<variable.unset>"), "unknown_reference", { blockId: "work" });
    await expectIssue(reading("<loop.results>"), "unknown_reference", { blockId: "work" });
  });

  it("refuses a reference to a block that does not run before it", async () => {
    await expectIssue(reading("<done.data>"), "reference_not_upstream", { blockId: "work" });
    await expectIssue(reading("<work.result>"), "reference_not_upstream", { blockId: "work" });
    await expectIssue(reading("<each.results>"), "reference_not_upstream", { blockId: "work" });
  });

  it("refuses reading a body block from outside its loop", async () => {
    const state = valid();
    state.blocks.done.config = { body: "<work.result>" };
    const issue = await expectIssue(state, "reference_into_subflow", { blockId: "done", field: "blocks.done.config.body" });
    expect(issue.message).toContain("<fan.results>");
  });

  it("refuses <loop.*> and <parallel.*> outside a loop or parallel", async () => {
    const state = valid();
    state.blocks.done.config = { body: "<loop.index> <parallel.item>" };
    expect((await issuesOf(state)).filter((issue) => issue.code === "reference_outside_subflow")).toHaveLength(2);
  });

  it("checks references in loop and parallel settings too", async () => {
    const state = valid();
    state.loops.each.forEachItems = "<work.result>";
    await expectIssue(state, "reference_into_subflow", { blockId: "each", field: "loops.each.forEachItems" });
  });
});

describe("the issues a refused run answers with", () => {
  it("travel together in one ValidationError, its message the first issue and how many more", async () => {
    const state = valid();
    state.blocks.work.type = "nope";
    state.edges.push({ id: "x", source: "a", target: "b" });
    const caught = new ValidationError(await issuesOf(state, "deploy"));
    expect(caught.code).toBe("INVALID_WORKFLOW");
    expect(caught.issues.length).toBeGreaterThanOrEqual(2);
    expect(caught.message).toMatch(/and \d+ more issue/);
  });
});

describe("state caps", () => {
  /** The caps state_issues checks first (docs/workflow-limits.md). */
  const MAX_BLOCKS = 500;
  const MAX_EDGES = 2_000;
  const MAX_BYTES = 2 * 1024 * 1024;

  function blocks(count: number) {
    const builder = new WorkflowBuilder().block("start", "manual_trigger", {}, { name: "Start" });
    for (let index = 1; index < count; index++) builder.block(`b${index}`, "variables", { assignments: [] });
    return builder.build();
  }

  it("let a state at every cap through", async () => {
    expect(await issuesOf(blocks(MAX_BLOCKS))).toEqual([]);
  });

  it("refuse a state past a cap with one issue per cap and nothing else", async () => {
    const state = { ...blocks(MAX_BLOCKS + 1), edges: Array.from({ length: MAX_EDGES + 1 }, () => ({ id: "dup", source: "nowhere", target: "start" })) };
    expect(await issuesOf(state)).toEqual([
      { code: "too_many_blocks", field: "blocks", message: "The workflow has 501 blocks; a workflow may have at most 500" },
      { code: "too_many_edges", field: "edges", message: "The workflow has 2,001 edges; a workflow may have at most 2,000" },
    ]);
  });

  it("refuse a state whose JSON is past the size cap, however malformed the rest", async () => {
    // The database measures the JSON text it prints, which puts a space after each `:` and `,`.
    expect(await issuesOf({ blocks: "not even an object", pad: "p".repeat(MAX_BYTES) })).toEqual([
      { code: "state_too_large", field: "state", message: "The workflow state is 2,097,195 bytes of JSON; a workflow may have at most 2,097,152" },
    ]);
  });
});
