import { describe, expect, it } from "vitest";
import { compileWorkflow } from "./execute.ts";
import { runWorkflow } from "../runs/run-workflow.ts";
import { follows } from "./scheduling.ts";
import { fn, flow, gatedWaits, ifElse, run, spansByName, wait } from "../../../../../test/helpers/workflows/flows.ts";

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
    const results = await Promise.all([1, 2, 3].map((n) => runWorkflow({ workflow: compiled, trigger: { kind: "manual", input: { n } } })));
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

describe("follows", () => {
  it("follows an edge by its source's outcome: success, error, the chosen condition or route", () => {
    const ok = (output: Record<string, unknown>) => ({ output, failed: false });
    const failed = { output: { error: "x", code: "BLOCK_FAILED" }, failed: true };
    expect([follows({ on: "success" }, ok({})), follows({ on: "success" }, failed)]).toEqual([true, false]);
    expect([follows({ on: "error" }, ok({})), follows({ on: "error" }, failed)]).toEqual([false, true]);
    const chose = { on: "choice" as const, field: "selectedOption", id: "a" };
    expect([follows(chose, ok({ selectedOption: "a" })), follows(chose, ok({ selectedOption: "b" })), follows(chose, failed)]).toEqual([true, false, false]);
  });
});
