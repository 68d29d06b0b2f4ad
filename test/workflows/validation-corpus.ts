/**
 * Workflow states, valid and broken in every way the validator knows, each with the answer
 * `workflows_private.state_issues` must give (validation-corpus.test.ts). An answer is one key per
 * issue, `code | blockId | edgeId | field` (`-` for a part the issue has not), sorted: which rule,
 * where. The expected keys were those of the TypeScript validator the database's replaced.
 */
import { WorkflowBuilder } from "../../supabase/functions/_shared/workflows/state/state-builder.ts";
import type { WorkflowState } from "../../supabase/functions/_shared/workflows/state/state-schema.ts";

/** A valid state touching every rule. */
export function richState(): WorkflowState {
  return new WorkflowBuilder()
    .block("api", "api_trigger", { inputFormat: [{ name: "items", type: "json", value: [1, 2] }] }, { name: "API" })
    .block("check", "condition", { conditions: [{ id: "many", kind: "if", expression: "<api.items>.length > 1" }, { id: "few", kind: "else" }] }, { name: "Check" })
    .loop("each", { nodes: ["fan"], loopType: "forEach", forEachItems: "<api.items>" }, { name: "Each" })
    .parallel("fan", { nodes: ["work"], parallelType: "count", count: 2 }, { name: "Fan" })
    .block("work", "function", { code: "return <each.item> * <parallel.index> + <loop.index>;" }, { name: "Work" })
    .block("route", "router", { value: "<check.selectedOption>", routes: [{ id: "a", operator: "equals", operand: "many" }, { id: "z", operator: "default" }] }, { name: "Route" })
    .block("set", "variables", { assignments: [{ name: "total", value: "<each.results>" }] }, { name: "Set" })
    .block("done", "response", { body: "<variable.total>", headers: { "X-Route": "<route.selectedRoute>" } }, { name: "Done" })
    .block("few", "response", { status: 422, body: { error: "need more items" } }, { name: "Few" })
    .block("pause", "wait", { amount: 1, unit: "ms" }, { name: "Pause" })
    .block("hook", "generic_webhook", { path: "orders", requireAuth: true, token: "{{HOOK_TOKEN}}", secretHeaderName: "X-Service-Secret" }, { name: "Hook" })
    .block("tick", "schedule", { cronExpression: "0 * * * *" }, { name: "Tick" })
    .block("talk", "chat_trigger", {}, { name: "Chat" })
    .edge("api", "check")
    .edge("check", "each", "condition-many")
    .edge("check", "few", "condition-few")
    .edge("each", "fan", "loop-start")
    .edge("fan", "work", "parallel-start")
    .edge("each", "route")
    .edge("route", "set", "router-a")
    .edge("route", "pause", "router-z")
    .edge("route", "pause", "error")
    .edge("set", "done")
    .edge("hook", "check")
    .edge("tick", "check")
    .edge("talk", "check")
    .build();
}

type Mutation = (state: WorkflowState) => void;

/** Breakages of richState(), each with its answer (the same in save and deploy mode: it has triggers). */
const mutations: Record<string, [Mutation, expected: string[]]> = {
  "block: wrong enabled type": [(s) => Object.assign(s.blocks.work, { enabled: "yes" }), ["invalid_shape | - | - | blocks.work.enabled"]],
  "block: unknown type": [(s) => Object.assign(s.blocks.work, { type: "teleport" }), ["unknown_block_type | work | - | blocks.work.type"]],
  "block: id differs from key": [(s) => Object.assign(s.blocks.pause, { id: "other" }), ["block_id_mismatch | other | - | blocks.pause.id"]],
  "block: duplicate name": [(s) => Object.assign(s.blocks.few, { name: "c HECK" }), ["duplicate_block_name | few | - | blocks.few.name"]],
  "block: reserved name": [(s) => Object.assign(s.blocks.few, { name: "Loop" }), ["reserved_block_name | few | - | blocks.few.name"]],
  "block: unreferenceable name": [(s) => Object.assign(s.blocks.few, { name: "Step #1" }), ["invalid_block_name | few | - | blocks.few.name"]],
  "config: several field problems": [
    (s) => Object.assign(s.blocks.work, { config: { code: 42, timeoutMs: 0, extra: true } }),
    [
      "invalid_config | work | - | blocks.work.config.code",
      "invalid_config | work | - | blocks.work.config.extra",
      "invalid_config | work | - | blocks.work.config.timeoutMs",
    ],
  ],
  "config: missing required field": [(s) => Object.assign(s.blocks.work, { config: {} }), ["invalid_config | work | - | blocks.work.config.code"]],
  "config: bad enum and bounds": [
    (s) => Object.assign(s.blocks.pause, { config: { amount: -1, unit: "hours" } }),
    ["invalid_config | pause | - | blocks.pause.config.amount", "invalid_config | pause | - | blocks.pause.config.unit"],
  ],
  "config: union out of range": [(s) => Object.assign(s.blocks.few, { config: { status: 99 } }), ["invalid_config | few | - | blocks.few.config.status"]],
  "config: nested item problems": [
    (s) => Object.assign(s.blocks.api, { config: { inputFormat: [{ name: "1x", type: "date" }, { type: "string" }] } }),
    [
      "invalid_config | api | - | blocks.api.config.inputFormat[0].name",
      "invalid_config | api | - | blocks.api.config.inputFormat[0].type",
      "invalid_config | api | - | blocks.api.config.inputFormat[1].name",
    ],
  ],
  "config: bad cron": [(s) => Object.assign(s.blocks.tick, { config: { cronExpression: "* *" } }), ["invalid_config | tick | - | blocks.tick.config.cronExpression"]],
  "config: schedule presets without their fields": [(s) => Object.assign(s.blocks.tick, { config: { scheduleType: "weekly", cronExpression: "0 * * * *", weeklyTime: "25:00" } }), ["invalid_config | tick | - | blocks.tick.config.weeklyTime"]],
  "config: schedule without an expression": [(s) => Object.assign(s.blocks.tick, { config: { scheduleType: "cron", timezone: "UTC" } }), ["invalid_block_config | tick | - | blocks.tick.config.cronExpression"]],
  "config: webhook path, header and token": [
    (s) => Object.assign(s.blocks.hook, { config: { path: "a/b", requireAuth: true, token: " ", secretHeaderName: "Bad Header" } }),
    ["invalid_config | hook | - | blocks.hook.config.path", "invalid_config | hook | - | blocks.hook.config.secretHeaderName"],
  ],
  "config: webhook auth without a token": [(s) => Object.assign(s.blocks.hook, { config: { path: "orders", requireAuth: true } }), ["invalid_block_config | hook | - | blocks.hook.config.token"]],
  "config: chat trigger takes no settings": [(s) => Object.assign(s.blocks.talk, { config: { greeting: "hi" } }), ["invalid_config | talk | - | blocks.talk.config.greeting"]],
  "config: wrong container config": [(s) => Object.assign(s.blocks.each, { config: { extra: 1 } }), ["invalid_config | each | - | blocks.each.config.extra"]],
  "conditions: order and expressions": [
    (s) =>
      Object.assign(s.blocks.check, {
        config: {
          conditions: [
            { id: "many", kind: "else if", expression: "x" },
            { id: "few", kind: "else", expression: "y" },
            { id: "many", kind: "if", expression: " " },
          ],
        },
      }),
    [
      "invalid_block_config | check | - | blocks.check.config.conditions[0].kind",
      "invalid_block_config | check | - | blocks.check.config.conditions[1].expression",
      "invalid_block_config | check | - | blocks.check.config.conditions[1].kind",
      "invalid_block_config | check | - | blocks.check.config.conditions[2].expression",
      "invalid_block_config | check | - | blocks.check.config.conditions[2].id",
      "invalid_block_config | check | - | blocks.check.config.conditions[2].kind",
    ],
  ],
  "routes: default first, missing operand, repeated id": [
    (s) =>
      Object.assign(s.blocks.route, {
        config: {
          value: 1,
          routes: [
            { id: "a", operator: "default" },
            { id: "z", operator: "gt" },
            { id: "z", operator: "exists" },
          ],
        },
      }),
    [
      "invalid_block_config | route | - | blocks.route.config.routes[0].operator",
      "invalid_block_config | route | - | blocks.route.config.routes[1].operand",
      "invalid_block_config | route | - | blocks.route.config.routes[2].id",
    ],
  ],
  "inputs: reserved and repeated names": [
    (s) => Object.assign(s.blocks.api, { config: { inputFormat: [{ name: "input", type: "string" }, { name: "a", type: "number" }, { name: "a", type: "string" }] } }),
    ["invalid_block_config | api | - | blocks.api.config.inputFormat[0].name", "invalid_block_config | api | - | blocks.api.config.inputFormat[2].name"],
  ],
  "variables: repeated names": [(s) => Object.assign(s.blocks.set, { config: { assignments: [{ name: "total", value: 1 }, { name: "total", value: 2 }] } }), ["invalid_block_config | set | - | blocks.set.config.assignments[1].name"]],
  "edges: dangling target and source": [
    (s) => s.edges.push({ id: "x1", source: "api", target: "ghost" }, { id: "x2", source: "ghost", target: "done" }),
    ["dangling_edge | - | x2 | edges[14].source", "dangling_edge | api | x1 | edges[13].target"],
  ],
  "edges: duplicate id, duplicate pair, self": [
    (s) => s.edges.push({ id: "api->check", source: "api", target: "pause" }, { id: "x3", source: "api", target: "check" }, { id: "x4", source: "pause", target: "pause" }),
    ["duplicate_edge | api | x3 | edges[14].target", "duplicate_edge_id | api | api->check | edges[13].id", "self_edge | pause | x4 | edges[15].target"],
  ],
  "edges: bad handles": [
    (s) =>
      s.edges.push(
        { id: "h1", source: "check", target: "pause", sourceHandle: "condition-ghost" },
        { id: "h2", source: "check", target: "pause" },
        { id: "h3", source: "api", target: "pause", sourceHandle: "error" },
        { id: "h4", source: "api", target: "pause", sourceHandle: "loop-start" },
        { id: "h5", source: "route", target: "few", sourceHandle: "router-ghost" },
        { id: "h6", source: "pause", target: "few", sourceHandle: "sideways" },
      ),
    [
      "invalid_edge_handle | api | h3 | edges[15].sourceHandle",
      "invalid_edge_handle | api | h4 | edges[16].sourceHandle",
      "invalid_edge_handle | check | h1 | edges[13].sourceHandle",
      "invalid_edge_handle | check | h2 | edges[14].sourceHandle",
      "invalid_edge_handle | pause | h6 | edges[18].sourceHandle",
      "invalid_edge_handle | route | h5 | edges[17].sourceHandle",
    ],
  ],
  "edges: into a trigger, out of a response": [
    (s) => s.edges.push({ id: "t1", source: "pause", target: "hook" }, { id: "t2", source: "done", target: "few" }),
    ["response_has_outgoing_edge | done | t2 | edges[14].source", "trigger_has_incoming_edge | pause | t1 | edges[13].target"],
  ],
  "config rules: a response header name HTTP refuses": [
    (s) => {
      (s.blocks.done.config as { headers: Record<string, string> }).headers = { "X-Route\nSet-Cookie": "a=b", "X Space": "1", "X-Ok": "1" };
    },
    ["invalid_block_config | done | - | blocks.done.config.headers", "invalid_block_config | done | - | blocks.done.config.headers"],
  ],
  "edges: crossing a body border": [
    (s) => s.edges.push({ id: "c1", source: "work", target: "done" }, { id: "c2", source: "each", target: "work", sourceHandle: "loop-start" }),
    ["cross_scope_edge | each | c2 | edges[14].target", "cross_scope_edge | work | c1 | edges[13].target"],
  ],
  "edges: handles of an invalid block are not checked": [
    (s) => {
      Object.assign(s.blocks.pause, { type: "nope" });
      s.edges.push({ id: "i1", source: "pause", target: "few", sourceHandle: "sideways" });
    },
    ["unknown_block_type | pause | - | blocks.pause.type"],
  ],
  "edges: cycles": [
    (s) => s.edges.push({ id: "y1", source: "done", target: "set" }, { id: "y2", source: "pause", target: "route" }),
    ["cycle | pause | - | blocks.pause", "response_has_outgoing_edge | done | y1 | edges[13].source"],
  ],
  "edges: two separate cycles": [
    (s) => {
      s.blocks.x = { id: "x", type: "variables", name: "X", config: { assignments: [] }, enabled: true };
      s.blocks.y = { id: "y", type: "variables", name: "Y", config: { assignments: [] }, enabled: true };
      s.edges.push({ id: "z1", source: "x", target: "y" }, { id: "z2", source: "y", target: "x" }, { id: "z3", source: "pause", target: "route" });
    },
    ["cycle | pause | - | blocks.pause", "cycle | x | - | blocks.x"],
  ],
  "triggers: two API triggers": [
    (s) => {
      s.blocks.api2 = { id: "api2", type: "api_trigger", name: "API 2", config: {}, enabled: true };
    },
    ["multiple_api_triggers | api2 | - | blocks.api2.type"],
  ],
  "subflows: loop block without settings": [
    (s) => {
      delete s.loops.each;
    },
    [
      "cross_scope_edge | each | each->fan:loop-start | edges[3].target",
      "missing_subflow | each | - | loops.each",
      "reference_not_upstream | work | - | blocks.work.config.code",
      "reference_outside_subflow | work | - | blocks.work.config.code",
    ],
  ],
  "subflows: settings without a block": [
    (s) => {
      s.parallels.ghost = { nodes: [], parallelType: "count", count: 1 };
    },
    ["missing_subflow | - | - | parallels.ghost"],
  ],
  "subflows: settings on a block of the other kind": [
    (s) => {
      s.parallels.each = { nodes: [], parallelType: "count", count: 1 };
    },
    ["missing_subflow | - | - | parallels.each"],
  ],
  "subflows: bad members": [
    (s) => {
      s.loops.each.nodes = ["fan", "ghost", "each", "few", "hook"];
    },
    [
      "misplaced_block | few | - | loops.each.nodes[3]",
      "misplaced_block | hook | - | loops.each.nodes[4]",
      "subflow_member | each | - | loops.each.nodes[1]",
      "subflow_member | each | - | loops.each.nodes[2]",
    ],
  ],
  "subflows: member of two bodies": [
    (s) => {
      s.loops.each.nodes = ["fan", "work"];
    },
    [
      "cross_scope_edge | fan | fan->work:parallel-start | edges[4].target",
      "reference_outside_subflow | work | - | blocks.work.config.code",
      "subflow_member | fan | - | parallels.fan.nodes[0]",
    ],
  ],
  "subflows: bodies in a circle": [
    (s) => {
      s.parallels.fan.nodes = ["work", "each"];
    },
    ["subflow_member | each | - | loops.each.nodes", "subflow_member | fan | - | parallels.fan.nodes"],
  ],
  "subflows: missing settings": [
    (s) => {
      s.loops.each = { nodes: ["fan"], loopType: "for" };
      s.parallels.fan = { nodes: ["work"], parallelType: "collection" };
    },
    ["invalid_subflow | each | - | loops.each.iterations", "invalid_subflow | fan | - | parallels.fan.distribution"],
  ],
  "subflows: iterations out of range": [
    (s) => {
      s.loops.each = { nodes: ["fan"], loopType: "for", iterations: 1001 };
    },
    ["invalid_shape | - | - | loops.each.iterations"],
  ],
  "subflows: empty body and no start edge": [
    (s) => {
      s.parallels.fan.nodes = [];
      s.loops.each.nodes = ["fan", "pause"];
      s.edges = s.edges.filter((edge) => edge.sourceHandle !== "loop-start" && edge.source !== "pause" && edge.target !== "pause");
    },
    [
      "cross_scope_edge | fan | fan->work:parallel-start | edges[3].target",
      "reference_not_upstream | work | - | blocks.work.config.code",
      "reference_outside_subflow | work | - | blocks.work.config.code",
      "reference_outside_subflow | work | - | blocks.work.config.code",
      "subflow_without_start | each | - | loops.each",
      "subflow_without_start | fan | - | parallels.fan.nodes",
    ],
  ],
  "references: unknown block, variable and loop field": [
    (s) => Object.assign(s.blocks.work, { config: { code: "return <nothing.value> + <variable.unset> + <loop.results>;" } }),
    [
      "unknown_reference | work | - | blocks.work.config.code",
      "unknown_reference | work | - | blocks.work.config.code",
      "unknown_reference | work | - | blocks.work.config.code",
    ],
  ],
  "references: not upstream and self": [
    (s) => Object.assign(s.blocks.work, { config: { code: "return <done.data> + <work.result> + <each.results> + <pause.status>;" } }),
    [
      "reference_not_upstream | work | - | blocks.work.config.code",
      "reference_not_upstream | work | - | blocks.work.config.code",
      "reference_not_upstream | work | - | blocks.work.config.code",
      "reference_not_upstream | work | - | blocks.work.config.code",
    ],
  ],
  "references: into a body from outside": [(s) => Object.assign(s.blocks.done, { config: { body: "<work.result>" } }), ["reference_into_subflow | done | - | blocks.done.config.body"]],
  "references: loop and parallel outside one": [
    (s) => Object.assign(s.blocks.done, { config: { body: "<loop.index> <parallel.item>" } }),
    ["reference_outside_subflow | done | - | blocks.done.config.body", "reference_outside_subflow | done | - | blocks.done.config.body"],
  ],
  "references: in loop settings": [
    (s) => Object.assign(s.loops.each, { forEachItems: ["<work.result>", { deep: "<nothing.x>" }] }),
    ["reference_into_subflow | each | - | loops.each.forEachItems[0]", "unknown_reference | each | - | loops.each.forEachItems[1].deep"],
  ],
  "references: api alias without an API trigger": [
    (s) => {
      delete s.blocks.api;
      s.edges = s.edges.filter((edge) => edge.source !== "api");
    },
    ["unknown_reference | check | - | blocks.check.config.conditions[0].expression", "unknown_reference | each | - | loops.each.forEachItems"],
  ],
  "caps: too many blocks": [
    (s) => {
      for (let index = 0; index < 500; index++) s.blocks[`extra${index}`] = { id: `extra${index}`, type: "variables", name: `Extra ${index}`, config: { assignments: [] }, enabled: true };
    },
    ["too_many_blocks | - | - | blocks"],
  ],
  "caps: too many edges": [
    (s) => {
      for (let index = 0; index < 2_001; index++) s.edges.push({ id: `extra${index}`, source: "api", target: "check" });
    },
    ["too_many_edges | - | - | edges"],
  ],
  "caps: state too large": [(s) => Object.assign(s.blocks.work, { config: { code: `return '${"x".repeat(2_200_000)}';` } }), ["state_too_large | - | - | state"]],
  "caps: every cap at once, and nothing else looked at": [
    (s) => {
      for (let index = 0; index < 501; index++) s.blocks[`extra${index}`] = { id: `extra${index}`, type: "nonsense", name: "", config: {}, enabled: true };
      for (let index = 0; index < 2_001; index++) s.edges.push({ id: "same", source: "nowhere", target: "nothing" });
      Object.assign(s.blocks.work, { config: { code: "x".repeat(2_200_000) } });
    },
    ["state_too_large | - | - | state", "too_many_blocks | - | - | blocks", "too_many_edges | - | - | edges"],
  ],
};

/** The validator's answer for one state in each mode, as issue keys (see the module comment). */
export interface Expected {
  save: string[];
  deploy: string[];
}

/** One state and its answer. */
export interface CorpusCase {
  name: string;
  state: unknown;
  expected: Expected;
}

const inBothModes = (keys: string[]): Expected => ({ save: keys, deploy: keys });

/** Every case: a name, a state (some deliberately malformed) and its answer. */
export function corpus(): CorpusCase[] {
  const cases: CorpusCase[] = [
    { name: "valid: rich state", state: richState(), expected: inBothModes([]) },
    { name: "valid: empty draft", state: {}, expected: { save: [], deploy: ["no_trigger | - | - | blocks"] } },
    { name: "shape: edges not an array", state: { blocks: {}, edges: {} }, expected: inBothModes(["invalid_shape | - | - | edges"]) },
    { name: "shape: unknown top-level key", state: { blocks: {}, extra: true }, expected: inBothModes(["invalid_shape | - | - | extra"]) },
    { name: "shape: not an object", state: [1, 2], expected: inBothModes(["invalid_shape | - | - | state"]) },
    { name: "shape: bad edge handle type", state: { edges: [{ id: "e", source: "a", target: "b", sourceHandle: 5 }] }, expected: inBothModes(["invalid_shape | - | - | edges[0].sourceHandle"]) },
  ];
  for (const [name, [mutate, keys]] of Object.entries(mutations)) {
    const state = richState();
    mutate(state);
    cases.push({ name, state, expected: inBothModes(keys) });
  }
  return cases;
}
