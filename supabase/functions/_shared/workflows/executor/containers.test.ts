import { describe, expect, it } from "vitest";
import { WorkflowBuilder } from "../state/state-builder.ts";
import { iterationsOf } from "./containers.ts";
import { compileWorkflow } from "./execute.ts";
import type { CompiledNode } from "./graph.ts";
import { fn, flow, gatedWaits, ifElse, run, spansByName, wait } from "../../../../../test/helpers/workflows/flows.ts";

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
    // Counted from 0, as <loop.index>: the second item's span is check[each:1].
    expect(spansByName(result.traceSpans).get("Check")?.map((span) => span.id)).toEqual(["check[each:0]", "check[each:1]"]);
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

describe("iterationsOf", () => {
  const compiled = compileWorkflow(
    new WorkflowBuilder()
      .block("start", "manual_trigger")
      .loop("each", { nodes: ["a"], loopType: "forEach", forEachItems: [] })
      .block("a", "variables", { assignments: [] })
      .parallel("fan", { nodes: ["b"], parallelType: "count", count: 1 })
      .block("b", "variables", { assignments: [] })
      .edge("start", "each")
      .edge("each", "a", "loop-start")
      .edge("each", "fan")
      .edge("fan", "b", "parallel-start")
      .build(),
  );
  const each = compiled.nodes.get("each") as CompiledNode;
  const fan = compiled.nodes.get("fan") as CompiledNode;

  it("reads collections as arrays, objects as entries and JSON text as either", () => {
    expect(iterationsOf(each, { forEachItems: ["x", "y"] })).toEqual({ count: 2, items: ["x", "y"] });
    expect(iterationsOf(each, { forEachItems: { a: 1 } })).toEqual({ count: 1, items: [{ key: "a", value: 1 }] });
    expect(iterationsOf(each, { forEachItems: "[1,2,3]" })).toEqual({ count: 3, items: [1, 2, 3] });
    expect(() => iterationsOf(each, { forEachItems: 7 })).toThrow("must be an array or object");
  });

  it("reads counts as whole numbers, text included, and refuses more than 1,000", () => {
    expect(iterationsOf(fan, { count: "4" })).toEqual({ count: 4, items: null });
    expect(() => iterationsOf(fan, { count: 1.5 })).toThrow("whole number");
    expect(() => iterationsOf(fan, { count: 1001 })).toThrow(expect.objectContaining({ code: "LIMIT_EXCEEDED" }));
  });
});
