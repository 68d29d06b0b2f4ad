import { describe, expect, it } from "vitest";
import type { BlockHandler } from "../blocks/block-handler.ts";
import type { TraceSpan } from "./context.ts";
import { ValidationError, WorkflowError } from "./errors.ts";
import { executeWorkflow, type ExecuteOptions } from "./execute.ts";
import { compileWorkflow } from "./graph.ts";
import { WorkflowBuilder } from "../state/state-builder.ts";

/** A manual trigger plus whatever the test adds. */
function flow(): WorkflowBuilder {
  return new WorkflowBuilder().block("start", "manual_trigger", {}, { name: "Start" });
}

function run(builder: WorkflowBuilder, options: Partial<ExecuteOptions> = {}) {
  return executeWorkflow({ workflow: builder.build(), trigger: { kind: "manual" }, ...options });
}

/** Flattens spans (iterations included) into `name` → spans. */
function spansByName(spans: TraceSpan[], out = new Map<string, TraceSpan[]>()): Map<string, TraceSpan[]> {
  for (const span of spans) {
    out.set(span.name, [...(out.get(span.name) ?? []), span]);
    if (span.children) spansByName(span.children, out);
  }
  return out;
}

/**
 * Replaces the `wait` handler with gates the test opens by block id, logging starts and ends, so
 * scheduling order can be asserted without timing.
 */
function gatedWaits() {
  const log: string[] = [];
  const gates = new Map<string, () => void>();
  const started = new Map<string, number>();
  let inFlight = 0;
  let maxInFlight = 0;
  const handler: BlockHandler<unknown> = {
    timeoutMs: () => 10_000,
    execute(blockRun) {
      // Repeated instances (iterations, branches) get `id#n` keys.
      const count = started.get(blockRun.block.id) ?? 0;
      started.set(blockRun.block.id, count + 1);
      const key = count === 0 ? blockRun.block.id : `${blockRun.block.id}#${count}`;
      log.push(`start ${key}`);
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      return new Promise((resolve) => {
        gates.set(key, () => {
          inFlight--;
          log.push(`end ${key}`);
          resolve({ done: key });
        });
      });
    },
  };
  const open = async (key: string) => {
    for (let attempt = 0; attempt < 100 && !gates.has(key); attempt++) await new Promise((resolve) => setTimeout(resolve, 1));
    const gate = gates.get(key);
    if (!gate) throw new Error(`${key} never started; log: ${log.join(", ")}`);
    gates.delete(key);
    gate();
    await new Promise((resolve) => setTimeout(resolve, 1));
  };
  return { log, open, handlers: { wait: handler }, maxInFlight: () => maxInFlight, waiting: () => [...gates.keys()] };
}

const wait = (ms = 0) => ({ amount: ms, unit: "ms" });
const fn = (code: string, extra: Record<string, unknown> = {}) => ({ code, ...extra });
const ifElse = (expression: string) => ({ conditions: [{ id: "yes", kind: "if", expression }, { id: "no", kind: "else" }] });

describe("scheduling", () => {
  it("starts a block as soon as all its inputs are done, not a whole layer later", async () => {
    const gates = gatedWaits();
    const builder = flow()
      .block("slow", "wait", wait())
      .block("fast", "wait", wait())
      .block("after_fast", "wait", wait())
      .block("join", "wait", wait())
      .edge("start", "slow")
      .edge("start", "fast")
      .edge("fast", "after_fast")
      .edge("slow", "join")
      .edge("after_fast", "join");
    const done = run(builder, { handlers: gates.handlers });
    await gates.open("fast");
    await gates.open("after_fast");
    expect(gates.log).toEqual(["start slow", "start fast", "end fast", "start after_fast", "end after_fast"]);
    await gates.open("slow");
    await gates.open("join");
    const result = await done;
    expect(result.status).toBe("success");
    expect(gates.log.slice(-3)).toEqual(["end slow", "start join", "end join"]);
  });

  it("runs independent blocks at the same time", async () => {
    const builder = flow().block("a", "wait", wait(120)).block("b", "wait", wait(120)).block("c", "wait", wait(120)).edge("start", "a").edge("start", "b").edge("start", "c");
    const started = Date.now();
    const result = await run(builder);
    expect(result.success).toBe(true);
    expect(Date.now() - started).toBeLessThan(300);
  });

  it("does not run blocks that are not reachable from the trigger the run starts from", async () => {
    const builder = flow()
      .block("hook", "generic_webhook", {}, { name: "Hook" })
      .block("from_start", "variables", { assignments: [{ name: "via", value: "start" }] })
      .block("from_hook", "variables", { assignments: [{ name: "via", value: "hook" }] })
      .edge("start", "from_start")
      .edge("hook", "from_hook");
    const result = await run(builder);
    expect(result.context.activePath).toEqual(["start", "from_start"]);
    expect(result.context.blockStates.from_hook).toEqual({ status: "skipped" });
    expect(result.context.variables).toEqual({ via: "start" });
  });

  it("skips disabled blocks and what only they lead to", async () => {
    const builder = flow()
      .block("off", "variables", { assignments: [{ name: "x", value: 1 }] }, { enabled: false })
      .block("after_off", "variables", { assignments: [{ name: "y", value: 2 }] })
      .block("on", "variables", { assignments: [{ name: "z", value: 3 }] })
      .chain("start", "off", "after_off")
      .edge("start", "on");
    const result = await run(builder);
    expect(result.context.variables).toEqual({ z: 3 });
    expect(result.context.blockStates.off.status).toBe("skipped");
    expect(result.context.blockStates.after_off.status).toBe("skipped");
  });

  it("uses the last finished block without successors as the output", async () => {
    const builder = flow().block("a", "function", fn("return 'a';")).block("b", "function", fn("return 'b';")).chain("start", "a", "b");
    const result = await run(builder);
    expect(result.output).toEqual({ result: "b", stdout: "" });
  });

  it("compiles once and runs many times", async () => {
    const compiled = compileWorkflow(flow().block("a", "function", fn("return <start.input.n> + 1;")).chain("start", "a").build());
    const results = await Promise.all([1, 2, 3].map((n) => executeWorkflow({ workflow: compiled, trigger: { kind: "manual", input: { n } } })));
    expect(results.map((result) => (result.output as { result: number }).result)).toEqual([2, 3, 4]);
  });
});

describe("conditions and routers", () => {
  function branching(expression: string) {
    return flow()
      .block("check", "condition", ifElse(expression), { name: "Check" })
      .block("yes_1", "variables", { assignments: [{ name: "yes1", value: true }] })
      .block("yes_2", "variables", { assignments: [{ name: "yes2", value: true }] })
      .block("no_1", "variables", { assignments: [{ name: "no1", value: true }] })
      .block("join", "function", fn("return 'joined';"))
      .edge("start", "check")
      .edge("check", "yes_1", "condition-yes")
      .edge("yes_1", "yes_2")
      .edge("check", "no_1", "condition-no")
      .edge("yes_2", "join")
      .edge("no_1", "join");
  }

  it("keeps the chosen branch and deactivates the other all the way down", async () => {
    const result = await run(branching("<start.input.n> > 5"), { trigger: { kind: "manual", input: { n: 9 } } });
    expect(result.context.variables).toEqual({ yes1: true, yes2: true });
    expect(result.context.blockStates.no_1.status).toBe("skipped");
    expect(result.context.decisions.condition).toEqual({ check: "yes" });
    expect(result.output).toEqual({ result: "joined", stdout: "" });
  });

  it("takes the else branch, and a join after both branches still runs once", async () => {
    const result = await run(branching("<start.input.n> > 5"), { trigger: { kind: "manual", input: { n: 1 } } });
    expect(result.context.variables).toEqual({ no1: true });
    expect(result.context.blockStates.yes_1.status).toBe("skipped");
    expect(result.context.blockStates.yes_2.status).toBe("skipped");
    expect(spansByName(result.traceSpans).get("join")).toHaveLength(1);
  });

  it("ends quietly when nothing matches and there is no else", async () => {
    const builder = flow()
      .block("check", "condition", { conditions: [{ id: "a", kind: "if", expression: "false" }, { id: "b", kind: "else if", expression: "0" }] })
      .block("a_path", "variables", { assignments: [{ name: "a", value: 1 }] })
      .block("b_path", "variables", { assignments: [{ name: "b", value: 1 }] })
      .edge("start", "check")
      .edge("check", "a_path", "condition-a")
      .edge("check", "b_path", "condition-b");
    const result = await run(builder);
    expect(result.success).toBe(true);
    expect(result.context.decisions.condition.check).toBeNull();
    expect(result.output).toEqual({ conditionResult: false, selectedOption: null, selectedPath: null });
  });

  it("evaluates else-if in order and reports which condition failed to evaluate", async () => {
    const builder = flow()
      .block("check", "condition", { conditions: [{ id: "a", kind: "if", expression: "false" }, { id: "b", kind: "else if", expression: "missing.value" }] }, { name: "Check" })
      .edge("start", "check");
    const result = await run(builder);
    expect(result.error?.code).toBe("BLOCK_FAILED");
    expect(result.error?.message).toBe('Block "Check" (condition): condition 2 ("else if", id "b"): ReferenceError: \'missing\' is not defined (line 1)');
  });

  function router(value: string, routes: { id: string; operator: string; operand?: unknown }[]) {
    const builder = flow().block("route", "router", { value, routes }, { name: "Route" }).edge("start", "route");
    for (const { id } of routes) builder.block(id, "function", fn(`return '${id}';`)).edge("route", id, `router-${id}`);
    return builder;
  }

  it("routes by the first matching rule and deactivates the other routes", async () => {
    const routes = [
      { id: "pro", operator: "equals", operand: "pro" },
      { id: "big", operator: "gt", operand: 100 },
      { id: "other", operator: "default" },
    ];
    const pro = await run(router("<start.input.plan>", routes), { trigger: { kind: "manual", input: { plan: "pro" } } });
    expect(pro.output).toEqual({ result: "pro", stdout: "" });
    expect(pro.context.decisions.router).toEqual({ route: "pro" });
    const big = await run(router("<start.input.size>", routes), { trigger: { kind: "manual", input: { size: "250" } } });
    expect(big.output).toEqual({ result: "big", stdout: "" });
    expect(big.context.blockStates.pro.status).toBe("skipped");
    const other = await run(router("<start.input.size>", routes), { trigger: { kind: "manual", input: { size: 3 } } });
    expect(other.output).toEqual({ result: "other", stdout: "" });
  });

  it.each([
    ["contains", "hello world", "world", true],
    ["contains", ["a", "b"], "b", true],
    ["not_contains", "hello", "x", true],
    ["starts_with", "order-1", "order-", true],
    ["ends_with", "report.pdf", ".pdf", true],
    ["matches", "ABC-123", "/^[a-z]+-\\d+$/i", true],
    ["matches", "abc", "^\\d+$", false],
    ["in", "b", ["a", "b"], true],
    ["lte", 3, 3, true],
    ["lt", "x", 3, false],
    ["not_equals", { a: 1 }, { a: 1 }, false],
    ["exists", "", undefined, false],
    ["not_exists", null, undefined, true],
  ])("router operator %s on %j with %j matches: %s", async (operator, value, operand, expected) => {
    const routes = [{ id: "pro", operator, ...(operand === undefined ? {} : { operand }) }, { id: "other", operator: "default" }];
    const result = await run(router("<start.input.value>", routes), { trigger: { kind: "manual", input: { value } } });
    expect(result.context.decisions.router.route).toBe(expected ? "pro" : "other");
  });

  it("fails with NO_ROUTE when no route matches and there is no default", async () => {
    const routes = [{ id: "pro", operator: "equals", operand: "pro" }];
    const result = await run(router("<start.input.plan>", routes), { trigger: { kind: "manual", input: { plan: "free" } } });
    expect(result.status).toBe("error");
    expect(result.error).toMatchObject({ code: "NO_ROUTE", block: { id: "route", name: "Route", type: "router" } });
    expect(result.error?.message).toContain('"free"');
  });
});

describe("errors", () => {
  it("follows the error edge when a block fails and skips its normal edges", async () => {
    const builder = flow()
      .block("boom", "function", fn("throw new Error('no stock');"), { name: "Boom" })
      .block("next", "variables", { assignments: [{ name: "next", value: true }] })
      .block("handler", "function", fn("return 'handled: ' + <boom.error>;"))
      .edge("start", "boom")
      .edge("boom", "next")
      .edge("boom", "handler", "error");
    const result = await run(builder);
    expect(result.success).toBe(true);
    expect(result.context.blockStates.next.status).toBe("skipped");
    expect(result.output).toEqual({ result: 'handled: Block "Boom" (function): Error: no stock (line 1)', stdout: "" });
    const span = spansByName(result.traceSpans).get("Boom")?.[0];
    expect(span).toMatchObject({ status: "error", errorHandled: true, errorCode: "BLOCK_FAILED" });
  });

  it("fails the run naming the block when there is no error edge, cancelling other branches", async () => {
    const builder = flow()
      .block("boom", "function", fn("throw new TypeError('bad');"), { name: "Boom" })
      .block("slow", "wait", wait(5_000), { name: "Slow" })
      .edge("start", "boom")
      .edge("start", "slow");
    const started = Date.now();
    const result = await run(builder);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(result).toMatchObject({ success: false, status: "error" });
    expect(result.error).toEqual({ code: "BLOCK_FAILED", message: 'Block "Boom" (function): TypeError: bad (line 1)', block: { id: "boom", name: "Boom", type: "function" } });
    expect(spansByName(result.traceSpans).get("Slow")?.[0].status).toBe("cancelled");
  });

  it("ends only the block that loops forever, hogs memory or tries to escape", async () => {
    const builder = flow()
      .block("spin", "function", fn("while (true) {}", { timeoutMs: 100 }), { name: "Spin" })
      .block("hog", "function", fn("const a = []; while (true) a.push({ n: a.length });", { memoryLimitMb: 4 }), { name: "Hog" })
      .block("escape", "function", fn("return process.env;"), { name: "Escape" })
      .block("report", "function", fn("return [<spin.code>, <hog.code>, <escape.code>];"))
      .edge("start", "spin")
      .edge("start", "hog")
      .edge("start", "escape")
      .edge("spin", "report", "error")
      .edge("hog", "report", "error")
      .edge("escape", "report", "error");
    const result = await run(builder);
    expect(result.success).toBe(true);
    expect(result.output).toEqual({ result: ["SANDBOX_TIMEOUT", "SANDBOX_MEMORY_LIMIT", "BLOCK_FAILED"], stdout: "" });
  });

  it("reports an endless loop without an error edge as the run's failure", async () => {
    const result = await run(flow().block("spin", "function", fn("for (;;) {}", { timeoutMs: 100 }), { name: "Spin" }).chain("start", "spin"));
    expect(result.error).toMatchObject({ code: "SANDBOX_TIMEOUT", block: { name: "Spin" } });
    expect(result.error?.message).toMatch(/^Block "Spin" \(function\): the code ran past its time limit/);
  });
});

describe("references", () => {
  it("resolves block outputs by normalised name, nested paths and array indexes", async () => {
    const builder = flow()
      .block("make", "function", fn("return { items: [{ id: 'a' }, { id: 'b' }], count: 2 };"), { name: "Make Items" })
      .block("read", "variables", {
        assignments: [
          { name: "whole", value: "<makeitems.result.items>" },
          { name: "second", value: "<makeitems.result.items[1].id>" },
          { name: "dotted", value: "<makeitems.result.items.0.id>" },
          { name: "length", value: "<makeitems.result.items.length>" },
          { name: "text", value: "count=<makeitems.result.count> first=<makeitems.result.items[0]>" },
        ],
      })
      .chain("start", "make", "read");
    const result = await run(builder);
    expect(result.context.variables).toEqual({
      whole: [{ id: "a" }, { id: "b" }],
      second: "b",
      dotted: "a",
      length: 2,
      text: 'count=2 first={"id":"a"}',
    });
  });

  it("resolves environment variables whole and inside text", async () => {
    const builder = flow()
      .block("read", "variables", { assignments: [{ name: "key", value: "{{API_KEY}}" }, { name: "header", value: "Bearer {{ API_KEY }}" }] })
      .chain("start", "read");
    const result = await run(builder, { env: { API_KEY: "s3cret" } });
    expect(result.context.variables).toEqual({ key: "s3cret", header: "Bearer s3cret" });
    expect(result.context.environment).toEqual(["API_KEY"]);
    expect(JSON.stringify(result.context)).not.toContain("s3cret".repeat(2));
  });

  it("passes references into code as values, never as source text", async () => {
    const builder = flow()
      .block("echo", "function", fn("return { type: typeof <start.input.payload>, value: <start.input.payload>, key: {{KEY}} };"))
      .chain("start", "echo");
    const payload = '"); while (true) {} //';
    const result = await run(builder, { env: { KEY: "k" }, trigger: { kind: "manual", input: { payload } } });
    expect(result.output).toEqual({ result: { type: "string", value: payload, key: "k" }, stdout: "" });
  });

  it("fails the run with the reference in the message when a path is missing", async () => {
    const builder = flow().block("make", "function", fn("return { name: 'x' };"), { name: "Make" }).block("read", "variables", { assignments: [{ name: "v", value: "<make.result.nmae>" }] }, { name: "Read" }).chain("start", "make", "read");
    const result = await run(builder);
    expect(result.error).toMatchObject({ code: "REFERENCE_NOT_FOUND", block: { name: "Read" } });
    expect(result.error?.message).toBe('Block "Read" (variables): reference <make.result.nmae> failed: the output of "Make" has no "result.nmae" (it has name)');
  });

  it("fails the run naming a missing environment variable", async () => {
    const result = await run(flow().block("read", "variables", { assignments: [{ name: "v", value: "{{MISSING}}" }] }, { name: "Read" }).chain("start", "read"));
    expect(result.error).toMatchObject({ code: "ENV_VAR_NOT_FOUND" });
    expect(result.error?.message).toContain("{{MISSING}}");
  });

  it("refuses to run a state whose references name no block", async () => {
    const state = flow().block("read", "variables", { assignments: [{ name: "v", value: "<nothere.value>" }] }, { name: "Read" }).chain("start", "read").build();
    const error = await executeWorkflow({ workflow: state, trigger: { kind: "manual" } }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).message).toContain("<nothere.value>");
  });

  it("reads a block on a branch that did not run as null", async () => {
    const builder = flow()
      .block("check", "condition", ifElse("false"))
      .block("yes", "function", fn("return 'yes';"))
      .block("no", "function", fn("return 'no';"))
      .block("join", "variables", { assignments: [{ name: "yes", value: "<yes.result>" }, { name: "no", value: "<no.result>" }] })
      .edge("start", "check")
      .edge("check", "yes", "condition-yes")
      .edge("check", "no", "condition-no")
      .edge("yes", "join")
      .edge("no", "join");
    const result = await run(builder);
    expect(result.context.variables).toEqual({ yes: null, no: "no" });
  });

  it("reads workflow variables set earlier", async () => {
    const builder = flow()
      .block("set", "variables", { assignments: [{ name: "greeting", value: "hi" }] })
      .block("use", "function", fn("return <variable.greeting> + '!';"))
      .chain("start", "set", "use");
    expect((await run(builder)).output).toEqual({ result: "hi!", stdout: "" });
  });
});

describe("triggers", () => {
  const inputFormat = [
    { name: "name", type: "string", value: "Ana" },
    { name: "age", type: "number", value: 30 },
    { name: "vip", type: "boolean", value: "true" },
    { name: "meta", type: "json", value: '{"a":1}' },
  ];

  it("gives the API trigger's typed fields and the structured body as <api.field> and <api.input>", async () => {
    const builder = new WorkflowBuilder()
      .block("api", "api_trigger", { inputFormat }, { name: "API" })
      .block("read", "variables", { assignments: [{ name: "age", value: "<api.age>" }, { name: "input", value: "<api.input>" }, { name: "nested", value: "<api.input.meta.a>" }] })
      .chain("api", "read");
    const result = await executeWorkflow({ workflow: builder.build(), trigger: { kind: "api", input: { name: "Bo", age: "41", vip: false, meta: { a: 2 }, extra: "kept" } } });
    expect(result.context.blockStates.api.output).toEqual({ name: "Bo", age: 41, vip: false, meta: { a: 2 }, input: { name: "Bo", age: 41, vip: false, meta: { a: 2 }, extra: "kept" } });
    expect(result.context.variables).toEqual({ age: 41, input: { name: "Bo", age: 41, vip: false, meta: { a: 2 }, extra: "kept" }, nested: 2 });
  });

  it("uses the value column in a manual run of an API-triggered workflow", async () => {
    const builder = new WorkflowBuilder().block("api", "api_trigger", { inputFormat }, { name: "API" });
    const result = await executeWorkflow({ workflow: builder.build(), trigger: { kind: "manual" } });
    expect(result.output).toEqual({ name: "Ana", age: 30, vip: true, meta: { a: 1 }, input: { name: "Ana", age: 30, vip: true, meta: { a: 1 } } });
  });

  it("exposes only the raw body as <api.input> without an Input Format, and missing fields as null", async () => {
    const bare = await executeWorkflow({ workflow: new WorkflowBuilder().block("api", "api_trigger", {}, { name: "API" }).build(), trigger: { kind: "api", input: { anything: [1] } } });
    expect(bare.output).toEqual({ input: { anything: [1] } });
    const missing = await executeWorkflow({ workflow: new WorkflowBuilder().block("api", "api_trigger", { inputFormat }, { name: "API" }).build(), trigger: { kind: "api", input: {} } });
    expect(missing.output).toMatchObject({ name: null, age: null });
  });

  it("refuses input that does not fit its type, naming the field", async () => {
    const result = await executeWorkflow({ workflow: new WorkflowBuilder().block("api", "api_trigger", { inputFormat }, { name: "API" }).build(), trigger: { kind: "api", input: { age: "old" } } });
    expect(result.error).toMatchObject({ code: "INVALID_INPUT", block: { id: "api" } });
    expect(result.error?.message).toContain('field "age" must be a number (got "old")');
  });

  it("turns files entries into UserFiles", async () => {
    const builder = new WorkflowBuilder().block("api", "api_trigger", { inputFormat: [{ name: "docs", type: "files" }] }, { name: "API" });
    const result = await executeWorkflow({
      workflow: builder.build(),
      trigger: { kind: "api", input: { docs: [{ type: "file", data: "data:text/plain;base64,aGVsbG8=", name: "a.txt" }, { type: "url", data: "https://example.com/b.pdf", name: "b.pdf", mime: "application/pdf" }] } },
    });
    const docs = (result.output as { docs: Record<string, unknown>[] }).docs;
    expect(docs[0]).toMatchObject({ name: "a.txt", size: 5, type: "text/plain", url: "data:text/plain;base64,aGVsbG8=" });
    expect(docs[0].expiresAt).toBeTypeOf("string");
    expect(docs[1]).toMatchObject({ name: "b.pdf", size: 0, type: "application/pdf", url: "https://example.com/b.pdf", key: "url/b.pdf" });
    expect(docs[1].uploadedAt).toBeUndefined();
  });

  it("starts webhook and schedule runs from their triggers", async () => {
    const state = new WorkflowBuilder()
      .block("hook", "generic_webhook", {}, { name: "Webhook 1" })
      .block("tick", "schedule", { cronExpression: "*/5 * * * *" }, { name: "Every 5" })
      .block("from_hook", "variables", { assignments: [{ name: "who", value: "<webhook1.user.name>" }] })
      .block("from_tick", "variables", { assignments: [{ name: "when", value: "<every5.scheduledFor>" }] })
      .edge("hook", "from_hook")
      .edge("tick", "from_tick")
      .build();
    const hook = await executeWorkflow({ workflow: state, trigger: { kind: "webhook", input: { user: { name: "Ana" } } } });
    expect(hook.context.variables).toEqual({ who: "Ana" });
    const tick = await executeWorkflow({ workflow: state, trigger: { kind: "schedule", input: { scheduledFor: "2026-01-01T00:05:00.000Z" } } });
    expect(tick.context.variables).toEqual({ when: "2026-01-01T00:05:00.000Z" });
  });

  it("refuses a trigger kind the workflow lacks", async () => {
    await expect(executeWorkflow({ workflow: flow().build(), trigger: { kind: "api" } })).rejects.toMatchObject({ code: "INVALID_INPUT" });
  });
});

describe("loops", () => {
  it("runs a for loop one iteration after another, with <loop.index> and results per iteration", async () => {
    const builder = flow()
      .loop("repeat", { nodes: ["square"], loopType: "for", iterations: 4 }, { name: "Repeat" })
      .block("square", "function", fn("return <loop.index> * <loop.index>;"))
      .block("after", "function", fn("return <repeat.results>.map((r) => r.result);"))
      .edge("start", "repeat")
      .edge("repeat", "square", "loop-start")
      .edge("repeat", "after");
    const result = await run(builder);
    expect(result.output).toEqual({ result: [0, 1, 4, 9], stdout: "" });
    expect(result.context.subflows).toEqual({ repeat: { kind: "loop", total: 4, completed: 4 } });
    const loopSpan = spansByName(result.traceSpans).get("Repeat")?.[0];
    expect(loopSpan?.children?.map((child) => child.name)).toEqual(["Repeat #0", "Repeat #1", "Repeat #2", "Repeat #3"]);
    expect(loopSpan?.children?.[2].children?.[0]).toMatchObject({ id: "square[repeat:2]", iteration: { containerId: "repeat", kind: "loop", index: 2 } });
  });

  it("iterates forEach over an array or an object's entries", async () => {
    const builder = flow()
      .loop("each", { nodes: ["label"], loopType: "forEach", forEachItems: "<start.input.things>" }, { name: "Each" })
      .block("label", "function", fn("return <loop.index> + ':' + JSON.stringify(<loop.item>) + '/' + <each.items>.length;"))
      .edge("start", "each")
      .edge("each", "label", "loop-start");
    const array = await run(builder, { trigger: { kind: "manual", input: { things: ["a", "b"] } } });
    expect((array.output as { results: { result: string }[] }).results.map((r) => r.result)).toEqual(['0:"a"/2', '1:"b"/2']);
    const object = await run(builder, { trigger: { kind: "manual", input: { things: { x: 1 } } } });
    expect((object.output as { results: { result: string }[] }).results[0].result).toBe('0:{"key":"x","value":1}/1');
  });

  it("fails clearly instead of stopping silently above 1,000 iterations", async () => {
    const builder = flow()
      .loop("many", { nodes: ["noop"], loopType: "for", iterations: "<start.input.n>" }, { name: "Many" })
      .block("noop", "variables", { assignments: [] })
      .edge("start", "many")
      .edge("many", "noop", "loop-start");
    const result = await run(builder, { trigger: { kind: "manual", input: { n: 1001 } } });
    expect(result.error).toMatchObject({ code: "LIMIT_EXCEEDED", block: { name: "Many" } });
    expect(result.error?.message).toContain("at most 1,000");
    const ok = await run(builder, { trigger: { kind: "manual", input: { n: 1000 } } });
    expect((ok.output as { iterations: number }).iterations).toBe(1000);
  });

  it("nests loops with <loop.*> for the innermost and <name.*> for outer ones", async () => {
    const builder = flow()
      .loop("rows", { nodes: ["cols"], loopType: "for", iterations: 2 }, { name: "Rows" })
      .loop("cols", { nodes: ["cell"], loopType: "forEach", forEachItems: ["a", "b", "c"] }, { name: "Cols" })
      .block("cell", "function", fn("return <rows.index> + <loop.item>;"))
      .edge("start", "rows")
      .edge("rows", "cols", "loop-start")
      .edge("cols", "cell", "loop-start");
    const result = await run(builder);
    const rows = (result.output as { results: { results: { result: string }[] }[] }).results;
    expect(rows.map((row) => row.results.map((cell) => cell.result))).toEqual([
      ["0a", "0b", "0c"],
      ["1a", "1b", "1c"],
    ]);
  });

  it("decides conditions afresh in each iteration", async () => {
    const builder = flow()
      .loop("each", { nodes: ["even", "yes", "no"], loopType: "forEach", forEachItems: [1, 2, 3, 4] }, { name: "Each" })
      .block("even", "condition", ifElse("<loop.item> % 2 === 0"))
      .block("yes", "function", fn("return 'even ' + <loop.item>;"))
      .block("no", "function", fn("return 'odd ' + <loop.item>;"))
      .edge("start", "each")
      .edge("each", "even", "loop-start")
      .edge("even", "yes", "condition-yes")
      .edge("even", "no", "condition-no");
    const result = await run(builder);
    expect((result.output as { results: { result: string }[] }).results.map((r) => r.result)).toEqual(["odd 1", "even 2", "odd 3", "even 4"]);
    expect(result.context.decisions.condition).toEqual({ "even[each:0]": "no", "even[each:1]": "yes", "even[each:2]": "no", "even[each:3]": "yes" });
  });

  it("names the failing block and iteration when a body fails", async () => {
    const builder = flow()
      .loop("each", { nodes: ["check"], loopType: "forEach", forEachItems: [1, 0, 2, 3] }, { name: "Each" })
      .block("check", "function", fn("if (<loop.item> === 0) throw new Error('zero'); return 1;"), { name: "Check" })
      .edge("start", "each")
      .edge("each", "check", "loop-start");
    const result = await run(builder);
    expect(result.error?.block).toEqual({ id: "check", name: "Check", type: "function" });
    expect(result.error?.message).toBe('Block "Check" (function): Error: zero (line 1) (in iteration 1 of loop "Each")');
    const loopSpan = spansByName(result.traceSpans).get("Each")?.[0];
    expect(loopSpan?.children?.map((child) => `${child.name} ${child.status}`)).toEqual(["Each #0 success", "Each #1 error"]);
  });

  it("hands a body failure to the loop's error edge when it has one", async () => {
    const builder = flow()
      .loop("each", { nodes: ["check"], loopType: "forEach", forEachItems: [0] }, { name: "Each" })
      .block("check", "function", fn("throw new Error('zero');"), { name: "Check" })
      .block("recover", "function", fn("return 'recovered';"))
      .edge("start", "each")
      .edge("each", "check", "loop-start")
      .edge("each", "recover", "error");
    const result = await run(builder);
    expect(result.success).toBe(true);
    expect(result.output).toEqual({ result: "recovered", stdout: "" });
  });
});

describe("parallels", () => {
  it("runs a collection in parallel with <parallel.index> and <parallel.item>, results in order", async () => {
    const builder = flow()
      .parallel("fan", { nodes: ["work"], parallelType: "collection", distribution: ["x", "y", "z"] }, { name: "Fan" })
      .block("work", "function", fn("return <parallel.item> + <parallel.index>;"))
      .edge("start", "fan")
      .edge("fan", "work", "parallel-start");
    const result = await run(builder);
    expect(result.output).toEqual({ results: [{ result: "x0", stdout: "" }, { result: "y1", stdout: "" }, { result: "z2", stdout: "" }], branches: 3 });
  });

  it("runs at most 20 branches at once", async () => {
    const gates = gatedWaits();
    const builder = flow()
      .parallel("fan", { nodes: ["work"], parallelType: "count", count: 45 }, { name: "Fan" })
      .block("work", "wait", wait())
      .edge("start", "fan")
      .edge("fan", "work", "parallel-start");
    const done = run(builder, { handlers: gates.handlers });
    for (let opened = 0; opened < 45; opened++) {
      for (let attempt = 0; attempt < 50 && gates.waiting().length === 0; attempt++) await new Promise((resolve) => setTimeout(resolve, 1));
      await gates.open(gates.waiting()[0]);
    }
    const result = await done;
    expect(result.success).toBe(true);
    expect(gates.maxInFlight()).toBe(20);
    expect((result.output as { results: unknown[] }).results).toHaveLength(45);
  });

  it("runs branches concurrently", async () => {
    const builder = flow()
      .parallel("fan", { nodes: ["pause"], parallelType: "count", count: 10 })
      .block("pause", "wait", wait(100))
      .edge("start", "fan")
      .edge("fan", "pause", "parallel-start");
    const started = Date.now();
    expect((await run(builder)).success).toBe(true);
    expect(Date.now() - started).toBeLessThan(400);
  });

  it("cancels the other branches and names the failing one", async () => {
    const builder = flow()
      .parallel("fan", { nodes: ["work"], parallelType: "collection", distribution: [200, 0, 3_000] }, { name: "Fan" })
      .block("work", "function", fn("if (<parallel.item> === 0) throw new Error('bad item'); return 1;"), { name: "Work" })
      .edge("start", "fan")
      .edge("fan", "work", "parallel-start");
    const result = await run(builder);
    expect(result.error?.message).toBe('Block "Work" (function): Error: bad item (line 1) (in branch 1 of parallel "Fan")');
  });

  it("deactivates a branch inside a parallel inside a loop, per branch", async () => {
    const builder = flow()
      .loop("outer", { nodes: ["fan"], loopType: "for", iterations: 2 }, { name: "Outer" })
      .parallel("fan", { nodes: ["pick", "hit", "miss"], parallelType: "collection", distribution: [1, 2] }, { name: "Fan" })
      .block("pick", "condition", ifElse("<parallel.item> === <outer.index> + 1"))
      .block("hit", "function", fn("return 'hit ' + <outer.index> + '/' + <parallel.index>;"))
      .block("miss", "function", fn("return 'miss ' + <outer.index> + '/' + <parallel.index>;"))
      .edge("start", "outer")
      .edge("outer", "fan", "loop-start")
      .edge("fan", "pick", "parallel-start")
      .edge("pick", "hit", "condition-yes")
      .edge("pick", "miss", "condition-no");
    const result = await run(builder);
    const grid = (result.output as { results: { results: { result: string }[] }[] }).results.map((row) => row.results.map((cell) => cell.result));
    expect(grid).toEqual([
      ["hit 0/0", "miss 0/1"],
      ["miss 1/0", "hit 1/1"],
    ]);
  });

  it("skips a whole loop and its parallels when the branch leading to it is not chosen", async () => {
    const builder = flow()
      .block("gate", "condition", ifElse("false"))
      .loop("outer", { nodes: ["fan"], loopType: "for", iterations: 3 })
      .parallel("fan", { nodes: ["work"], parallelType: "count", count: 2 })
      .block("work", "variables", { assignments: [{ name: "ran", value: true }] })
      .block("else_path", "function", fn("return 'else';"))
      .edge("start", "gate")
      .edge("gate", "outer", "condition-yes")
      .edge("gate", "else_path", "condition-no")
      .edge("outer", "fan", "loop-start")
      .edge("fan", "work", "parallel-start");
    const result = await run(builder);
    expect(result.context.blockStates.outer.status).toBe("skipped");
    expect(result.context.variables).toEqual({});
    expect(result.context.subflows).toEqual({});
    expect(result.output).toEqual({ result: "else", stdout: "" });
  });
});

describe("timeouts, cancellation and the Response block", () => {
  it("times out one block by its own timeout", async () => {
    const builder = flow().block("slow", "wait", { ...wait(2_000), timeoutMs: 50 }, { name: "Slow" }).chain("start", "slow");
    const result = await run(builder);
    expect(result.error).toMatchObject({ code: "BLOCK_TIMEOUT", block: { name: "Slow" } });
    expect(result.error?.message).toContain("timeout of 50 ms");
  });

  it("times out the whole run", async () => {
    const builder = flow().block("slow", "wait", wait(2_000), { name: "Slow" }).chain("start", "slow");
    const started = Date.now();
    const result = await run(builder, { timeoutMs: 80 });
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(result).toMatchObject({ status: "timeout", success: false, error: { code: "RUN_TIMEOUT" } });
  });

  it("treats user code stopped by the run's deadline as a run timeout", async () => {
    const builder = flow().block("spin", "function", fn("while (true) {}"), { name: "Spin" }).chain("start", "spin");
    const result = await run(builder, { timeoutMs: 100 });
    expect(result.status).toBe("timeout");
  });

  it("cancels a run through its signal", async () => {
    const controller = new AbortController();
    const builder = flow().block("slow", "wait", wait(2_000), { name: "Slow" }).chain("start", "slow");
    const done = run(builder, { signal: controller.signal });
    setTimeout(() => controller.abort(), 30);
    const result = await done;
    expect(result).toMatchObject({ status: "cancelled", error: { code: "CANCELLED" } });
    expect(spansByName(result.traceSpans).get("Slow")?.[0].status).toBe("cancelled");
  });

  it("ends the run with a Response: status, headers and body, cancelling what still runs", async () => {
    const builder = flow()
      .block("answer", "response", { status: "<start.input.code>", headers: { "X-Trace": "t-<start.input.code>" }, body: { ok: true, n: "<start.input.code>" } }, { name: "Answer" })
      .block("slow", "wait", wait(3_000), { name: "Slow" })
      .edge("start", "answer")
      .edge("start", "slow");
    const started = Date.now();
    const result = await run(builder, { trigger: { kind: "manual", input: { code: 201 } } });
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(result.status).toBe("success");
    expect(result.response).toEqual({ status: 201, headers: { "X-Trace": "t-201" }, body: { ok: true, n: 201 } });
    expect(spansByName(result.traceSpans).get("Slow")?.[0].status).toBe("cancelled");
  });

  it("refuses a Response status outside 100-599", async () => {
    const result = await run(flow().block("answer", "response", { status: "<start.input.code>" }, { name: "Answer" }).chain("start", "answer"), { trigger: { kind: "manual", input: { code: 700 } } });
    expect(result.error?.message).toContain("status must be an HTTP status code");
  });
});

describe("trace spans and context", () => {
  it("records start, end, duration, input, output and error for every block", async () => {
    const builder = flow()
      .block("one", "function", fn("console.log('hi'); return <start.input.x>;"), { name: "One" })
      .block("two", "function", fn("throw new Error('nope');"), { name: "Two" })
      .block("catch", "variables", { assignments: [{ name: "caught", value: "<two.code>" }] })
      .chain("start", "one", "two")
      .edge("two", "catch", "error");
    const seen: string[] = [];
    const result = await run(builder, { trigger: { kind: "manual", input: { x: 5 } }, onBlockComplete: (span) => seen.push(span.name) });
    const [start, one, two] = result.traceSpans;
    expect(start.name).toBe("Start");
    expect(one).toMatchObject({ blockId: "one", type: "function", status: "success", output: { result: 5, stdout: "hi" }, input: { code: { source: "console.log('hi'); return __refs[0];", values: [5] } } });
    expect(Date.parse(one.endedAt)).toBeGreaterThanOrEqual(Date.parse(one.startedAt));
    expect(one.durationMs).toBeGreaterThanOrEqual(0);
    expect(two).toMatchObject({ status: "error", error: 'Block "Two" (function): Error: nope (line 1)', errorCode: "BLOCK_FAILED", errorHandled: true });
    expect(seen).toEqual(["Start", "One", "Two", "catch"]);
    expect(result.metadata).toMatchObject({ trigger: "manual", triggerBlockId: "start", blocksExecuted: 4 });
  });

  it("lists the workspace's variable names but never their values", async () => {
    const result = await run(flow(), { env: { TOKEN: "abc", OTHER: "def" } });
    expect(result.context.environment).toEqual(["OTHER", "TOKEN"]);
    expect(JSON.stringify(result)).not.toMatch(/abc|def/);
  });

  it("throws typed errors for callers to map", async () => {
    const error = await executeWorkflow({ workflow: { blocks: {} }, trigger: { kind: "manual" } }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(WorkflowError);
    expect((error as WorkflowError).code).toBe("INVALID_WORKFLOW");
  });
});
