/**
 * Workflow states, valid and broken in every way the validators know, for checking that the
 * TypeScript validator and the SQL one agree (validation-parity.test.ts).
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

const mutations: Record<string, Mutation> = {
  "block: wrong enabled type": (s) => Object.assign(s.blocks.work, { enabled: "yes" }),
  "block: unknown type": (s) => Object.assign(s.blocks.work, { type: "teleport" }),
  "block: id differs from key": (s) => Object.assign(s.blocks.pause, { id: "other" }),
  "block: duplicate name": (s) => Object.assign(s.blocks.few, { name: "c HECK" }),
  "block: reserved name": (s) => Object.assign(s.blocks.few, { name: "Loop" }),
  "block: unreferenceable name": (s) => Object.assign(s.blocks.few, { name: "Step #1" }),
  "config: several field problems": (s) => Object.assign(s.blocks.work, { config: { code: 42, timeoutMs: 0, extra: true } }),
  "config: missing required field": (s) => Object.assign(s.blocks.work, { config: {} }),
  "config: bad enum and bounds": (s) => Object.assign(s.blocks.pause, { config: { amount: -1, unit: "hours" } }),
  "config: union out of range": (s) => Object.assign(s.blocks.few, { config: { status: 99 } }),
  "config: nested item problems": (s) => Object.assign(s.blocks.api, { config: { inputFormat: [{ name: "1x", type: "date" }, { type: "string" }] } }),
  "config: bad cron": (s) => Object.assign(s.blocks.tick, { config: { cronExpression: "* *" } }),
  "config: schedule presets without their fields": (s) => Object.assign(s.blocks.tick, { config: { scheduleType: "weekly", cronExpression: "0 * * * *", weeklyTime: "25:00" } }),
  "config: schedule without an expression": (s) => Object.assign(s.blocks.tick, { config: { scheduleType: "cron", timezone: "UTC" } }),
  "config: webhook path, header and token": (s) => Object.assign(s.blocks.hook, { config: { path: "a/b", requireAuth: true, token: " ", secretHeaderName: "Bad Header" } }),
  "config: webhook auth without a token": (s) => Object.assign(s.blocks.hook, { config: { path: "orders", requireAuth: true } }),
  "config: chat trigger takes no settings": (s) => Object.assign(s.blocks.talk, { config: { greeting: "hi" } }),
  "config: wrong container config": (s) => Object.assign(s.blocks.each, { config: { extra: 1 } }),
  "conditions: order and expressions": (s) =>
    Object.assign(s.blocks.check, {
      config: {
        conditions: [
          { id: "many", kind: "else if", expression: "x" },
          { id: "few", kind: "else", expression: "y" },
          { id: "many", kind: "if", expression: " " },
        ],
      },
    }),
  "routes: default first, missing operand, repeated id": (s) =>
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
  "inputs: reserved and repeated names": (s) => Object.assign(s.blocks.api, { config: { inputFormat: [{ name: "input", type: "string" }, { name: "a", type: "number" }, { name: "a", type: "string" }] } }),
  "variables: repeated names": (s) => Object.assign(s.blocks.set, { config: { assignments: [{ name: "total", value: 1 }, { name: "total", value: 2 }] } }),
  "edges: dangling target and source": (s) => s.edges.push({ id: "x1", source: "api", target: "ghost" }, { id: "x2", source: "ghost", target: "done" }),
  "edges: duplicate id, duplicate pair, self": (s) => s.edges.push({ id: "api->check", source: "api", target: "pause" }, { id: "x3", source: "api", target: "check" }, { id: "x4", source: "pause", target: "pause" }),
  "edges: bad handles": (s) =>
    s.edges.push(
      { id: "h1", source: "check", target: "pause", sourceHandle: "condition-ghost" },
      { id: "h2", source: "check", target: "pause" },
      { id: "h3", source: "api", target: "pause", sourceHandle: "error" },
      { id: "h4", source: "api", target: "pause", sourceHandle: "loop-start" },
      { id: "h5", source: "route", target: "few", sourceHandle: "router-ghost" },
      { id: "h6", source: "pause", target: "few", sourceHandle: "sideways" },
    ),
  "edges: into a trigger, out of a response": (s) => s.edges.push({ id: "t1", source: "pause", target: "hook" }, { id: "t2", source: "done", target: "few" }),
  "config rules: a response header name HTTP refuses": (s) => {
    (s.blocks.done.config as { headers: Record<string, string> }).headers = { "X-Route\nSet-Cookie": "a=b", "X Space": "1", "X-Ok": "1" };
  },
  "edges: crossing a body border": (s) => s.edges.push({ id: "c1", source: "work", target: "done" }, { id: "c2", source: "each", target: "work", sourceHandle: "loop-start" }),
  "edges: handles of an invalid block are not checked": (s) => {
    Object.assign(s.blocks.pause, { type: "nope" });
    s.edges.push({ id: "i1", source: "pause", target: "few", sourceHandle: "sideways" });
  },
  "edges: cycles": (s) => s.edges.push({ id: "y1", source: "done", target: "set" }, { id: "y2", source: "pause", target: "route" }),
  "edges: two separate cycles": (s) => {
    s.blocks.x = { id: "x", type: "variables", name: "X", config: { assignments: [] }, enabled: true };
    s.blocks.y = { id: "y", type: "variables", name: "Y", config: { assignments: [] }, enabled: true };
    s.edges.push({ id: "z1", source: "x", target: "y" }, { id: "z2", source: "y", target: "x" }, { id: "z3", source: "pause", target: "route" });
  },
  "triggers: two API triggers": (s) => {
    s.blocks.api2 = { id: "api2", type: "api_trigger", name: "API 2", config: {}, enabled: true };
  },
  "subflows: loop block without settings": (s) => {
    delete s.loops.each;
  },
  "subflows: settings without a block": (s) => {
    s.parallels.ghost = { nodes: [], parallelType: "count", count: 1 };
  },
  "subflows: settings on a block of the other kind": (s) => {
    s.parallels.each = { nodes: [], parallelType: "count", count: 1 };
  },
  "subflows: bad members": (s) => {
    s.loops.each.nodes = ["fan", "ghost", "each", "few", "hook"];
  },
  "subflows: member of two bodies": (s) => {
    s.loops.each.nodes = ["fan", "work"];
  },
  "subflows: bodies in a circle": (s) => {
    s.parallels.fan.nodes = ["work", "each"];
  },
  "subflows: missing settings": (s) => {
    s.loops.each = { nodes: ["fan"], loopType: "for" };
    s.parallels.fan = { nodes: ["work"], parallelType: "collection" };
  },
  "subflows: iterations out of range": (s) => {
    s.loops.each = { nodes: ["fan"], loopType: "for", iterations: 1001 };
  },
  "subflows: empty body and no start edge": (s) => {
    s.parallels.fan.nodes = [];
    s.loops.each.nodes = ["fan", "pause"];
    s.edges = s.edges.filter((edge) => edge.sourceHandle !== "loop-start" && edge.source !== "pause" && edge.target !== "pause");
  },
  "references: unknown block, variable and loop field": (s) => Object.assign(s.blocks.work, { config: { code: "return <nothing.value> + <variable.unset> + <loop.results>;" } }),
  "references: not upstream and self": (s) => Object.assign(s.blocks.work, { config: { code: "return <done.data> + <work.result> + <each.results> + <pause.status>;" } }),
  "references: into a body from outside": (s) => Object.assign(s.blocks.done, { config: { body: "<work.result>" } }),
  "references: loop and parallel outside one": (s) => Object.assign(s.blocks.done, { config: { body: "<loop.index> <parallel.item>" } }),
  "references: in loop settings": (s) => Object.assign(s.loops.each, { forEachItems: ["<work.result>", { deep: "<nothing.x>" }] }),
  "references: api alias without an API trigger": (s) => {
    delete s.blocks.api;
    s.edges = s.edges.filter((edge) => edge.source !== "api");
  },
  "shape: not an object": () => undefined,
  "caps: too many blocks": (s) => {
    for (let index = 0; index < 500; index++) s.blocks[`extra${index}`] = { id: `extra${index}`, type: "variables", name: `Extra ${index}`, config: { assignments: [] }, enabled: true };
  },
  "caps: too many edges": (s) => {
    for (let index = 0; index < 2_001; index++) s.edges.push({ id: `extra${index}`, source: "api", target: "check" });
  },
  "caps: state too large": (s) => Object.assign(s.blocks.work, { config: { code: `return '${"x".repeat(2_200_000)}';` } }),
  "caps: every cap at once, and nothing else looked at": (s) => {
    for (let index = 0; index < 501; index++) s.blocks[`extra${index}`] = { id: `extra${index}`, type: "nonsense", name: "", config: {}, enabled: true };
    for (let index = 0; index < 2_001; index++) s.edges.push({ id: "same", source: "nowhere", target: "nothing" });
    Object.assign(s.blocks.work, { config: { code: "x".repeat(2_200_000) } });
  },
};

/** Every case: a name and a state (some deliberately malformed). */
export function corpus(): [name: string, state: unknown][] {
  const cases: [string, unknown][] = [
    ["valid: rich state", richState()],
    ["valid: empty draft", {}],
    ["shape: edges not an array", { blocks: {}, edges: {} }],
    ["shape: unknown top-level key", { blocks: {}, extra: true }],
    ["shape: not an object", [1, 2]],
    ["shape: bad edge handle type", { edges: [{ id: "e", source: "a", target: "b", sourceHandle: 5 }] }],
  ];
  for (const [name, mutate] of Object.entries(mutations)) {
    if (name === "shape: not an object") continue;
    const state = richState();
    mutate(state);
    cases.push([name, state]);
  }
  return cases;
}
