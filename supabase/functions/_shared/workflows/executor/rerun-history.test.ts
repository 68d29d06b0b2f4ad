import { describe, expect, it } from "vitest";
import type { BlockHandler } from "../core/block-handler.ts";
import { BLOCK_HANDLERS } from "../blocks/handlers.ts";
import type { Clock } from "../core/context.ts";
import { compileWorkflow } from "./graph.ts";
import type { CompletedCheckpoint } from "./replay.ts";
import { rerunHistory } from "./rerun-history.ts";
import { collectingDurability } from "../runs/collected-outcomes.ts";
import { fn, flow, run } from "../../../../../test/helpers/workflows/flows.ts";

/** The real Function handler, counting how often each block id ran. */
function countedFunctions() {
  const runs = new Map<string, number>();
  const handler: BlockHandler<unknown> = {
    ...BLOCK_HANDLERS.function,
    execute(blockRun) {
      runs.set(blockRun.block.id, (runs.get(blockRun.block.id) ?? 0) + 1);
      return BLOCK_HANDLERS.function.execute(blockRun);
    },
  };
  return { runs, handlers: { function: handler } };
}

/** start → one → two → a loop of three (×3) → four, and a side branch start → side that nothing follows. */
function steps() {
  return flow()
    .block("one", "function", fn("return 1;"), { name: "One" })
    .block("two", "function", fn("return <one.result> + 1;"), { name: "Two" })
    .block("three", "function", fn("return <loop.index> * 10;"), { name: "Three" })
    .loop("repeat", { nodes: ["three"], loopType: "for", iterations: 3 }, { name: "Repeat" })
    .block("four", "function", fn("return { two: <two.result>, loop: <repeat.results> };"), { name: "Four" })
    .block("side", "function", fn("return 'side';"), { name: "Side" })
    .chain("start", "one", "two", "repeat", "four")
    .edge("repeat", "three", "loop-start")
    .edge("start", "side");
}

const completed = (history: readonly { kind: string }[]) => history.filter((checkpoint): checkpoint is CompletedCheckpoint => checkpoint.kind === "completed");

describe("a sync run's collected outcomes", () => {
  it("are every completed block instance, and the run never parks: its Waits sleep", async () => {
    const outcomes = collectingDurability();
    let now = 0;
    const slept: number[] = [];
    const clock: Clock = { now: () => now, sleep: async (ms) => void (slept.push(ms), (now += ms)) };
    const builder = steps().block("pause", "wait", { amount: 5, unit: "minutes" }, { name: "Pause" }).edge("four", "pause");
    const result = await run(builder, { durable: outcomes, services: { clock } });
    expect(result.status).toBe("success");
    expect(slept).toEqual([300_000]);
    expect(outcomes.kept.map((checkpoint) => checkpoint.key).sort()).toEqual(
      ["four", "one", "pause", "side", "start", "three[repeat:0]", "three[repeat:1]", "three[repeat:2]", "two"]);
  });

  it("keeps them masked once the run has ended, as its trace is", async () => {
    const outcomes = collectingDurability();
    const builder = flow().block("leak", "function", fn("return 'token ' + {{TOKEN}};"), { name: "Leak" }).chain("start", "leak");
    const result = await run(builder, { durable: outcomes, env: { TOKEN: "s3cr3t-value" } });
    expect(result.output).toEqual({ result: "token ***", stdout: "" });
    expect(JSON.stringify(outcomes.kept)).not.toContain("s3cr3t-value");
    expect(outcomes.kept.find((checkpoint) => checkpoint.key === "leak")).toMatchObject({ output: { result: "token ***" } });
  });
});

describe("a fromBlock re-run's history", () => {
  it("replays what does not depend on the block, and runs the block and what follows again", async () => {
    const original = collectingDurability();
    await run(steps(), { durable: original });

    const fromFour = rerunHistory(compileWorkflow(steps().build()), completed(original.kept), "four");
    if (!fromFour.ok) throw new Error(fromFour.message);
    expect(fromFour.history.map((checkpoint) => checkpoint.key)).not.toContain("four");
    const counted = countedFunctions();
    const rerun = collectingDurability(fromFour.history);
    const again = await run(steps(), { ...counted, durable: rerun });
    expect(again.status).toBe("success");
    expect(again.output).toEqual({ result: { two: 2, loop: [{ result: 0, stdout: "" }, { result: 10, stdout: "" }, { result: 20, stdout: "" }] }, stdout: "" });
    expect(Object.fromEntries(counted.runs)).toEqual({ four: 1 });
    // The re-run's own history is whole: what it replayed, then what it ran.
    expect(rerun.kept.map((checkpoint) => checkpoint.key).at(-1)).toBe("four");
    expect(rerun.kept).toHaveLength(original.kept.length);
  });

  it("runs a named loop again whole, with its body's instances", async () => {
    const original = collectingDurability();
    await run(steps(), { durable: original });
    const fromLoop = rerunHistory(compileWorkflow(steps().build()), completed(original.kept), "repeat");
    if (!fromLoop.ok) throw new Error(fromLoop.message);
    expect(fromLoop.history.map((checkpoint) => checkpoint.key).sort()).toEqual(["one", "side", "start", "two"]);
    const counted = countedFunctions();
    await run(steps(), { ...counted, durable: collectingDurability(fromLoop.history) });
    expect(Object.fromEntries(counted.runs)).toEqual({ three: 3, four: 1 });
  });

  it("refuses a block that is not one of the version's, or one inside a loop or parallel", () => {
    const workflow = compileWorkflow(steps().build());
    expect(rerunHistory(workflow, [], "nowhere")).toMatchObject({ ok: false, code: "UNKNOWN_BLOCK" });
    expect(rerunHistory(workflow, [], "three")).toMatchObject({ ok: false, code: "NESTED_BLOCK" });
  });
});
