import { describe, expect, it } from "vitest";
import type { BlockHandler } from "../core/block-handler.ts";
import { BLOCK_HANDLERS } from "../blocks/handlers.ts";
import type { Clock } from "../core/context.ts";
import type { ApprovalDesk, ApprovalState } from "../core/approvals.ts";
import type { Checkpoint, Durability } from "./replay.ts";
import { fn, flow, run, spansByName, wait } from "../../../../../test/helpers/workflows/flows.ts";

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

/** An in-memory history; `onRecord` sees each checkpoint once it is stored. */
function memoryHistory(history: Checkpoint[] = [], onRecord: (checkpoint: Checkpoint) => void = () => {}, parkAfterMs: number | null = 60_000): Durability {
  return {
    history: [...history],
    parkAfterMs,
    record: async (checkpoint) => {
      history.push(structuredClone(checkpoint));
      onRecord(checkpoint);
    },
  };
}

/** start → one → two → vars → loop of three → four (reads the variable and the loop's results). */
function fourSteps() {
  return flow()
    .block("one", "function", fn("return 1;"), { name: "One" })
    .block("two", "function", fn("return <one.result> + 1;"), { name: "Two" })
    .block("vars", "variables", { assignments: [{ name: "seen", value: "<two.result>" }] }, { name: "Vars" })
    .block("three", "function", fn("return <loop.index> * 10;"), { name: "Three" })
    .loop("repeat", { nodes: ["three"], loopType: "for", iterations: 3 }, { name: "Repeat" })
    .block("four", "function", fn("return { seen: <variable.seen>, loop: <repeat.results> };"), { name: "Four" })
    .chain("start", "one", "two", "vars", "repeat", "four")
    .edge("repeat", "three", "loop-start");
}

describe("durable runs", () => {
  it("resumes a run stopped after its second block without running a completed block twice", async () => {
    const history: Checkpoint[] = [];
    const counted = countedFunctions();
    const controller = new AbortController();
    const first = await run(fourSteps(), { ...counted, signal: controller.signal, durable: memoryHistory(history, (checkpoint) => checkpoint.key === "two" && controller.abort()) });
    expect(first.status).toBe("cancelled");
    expect(history.map((checkpoint) => checkpoint.key)).toEqual(["start", "one", "two"]);

    const resumed = await run(fourSteps(), { ...counted, durable: memoryHistory(history) });
    expect(resumed.status).toBe("success");
    expect(resumed.output).toEqual({ result: { seen: 2, loop: [{ result: 0, stdout: "" }, { result: 10, stdout: "" }, { result: 20, stdout: "" }] }, stdout: "" });
    expect(Object.fromEntries(counted.runs)).toEqual({ one: 1, two: 1, three: 3, four: 1 });
    // The trace is whole: the replayed blocks' spans and the new ones.
    const spans = spansByName(resumed.traceSpans);
    expect(["Start", "One", "Two", "Vars", "Repeat", "Four"].map((name) => spans.get(name)?.length)).toEqual([1, 1, 1, 1, 1, 1]);
    expect(resumed.context.activePath).toEqual(["start", "one", "two", "vars", "repeat", "four"]);
    expect(resumed.metadata.blocksExecuted).toBe(first.metadata.blocksExecuted + 6);
  });

  it("resumes inside a loop from the last completed iteration, with the variables the run had", async () => {
    const history: Checkpoint[] = [];
    const counted = countedFunctions();
    const controller = new AbortController();
    await run(fourSteps(), { ...counted, signal: controller.signal, durable: memoryHistory(history, (checkpoint) => checkpoint.key === "three[repeat:1]" && controller.abort()) });
    expect(counted.runs.get("three")).toBe(2);

    const resumed = await run(fourSteps(), { ...counted, durable: memoryHistory(history) });
    expect(resumed.status).toBe("success");
    expect(Object.fromEntries(counted.runs)).toEqual({ one: 1, two: 1, three: 3, four: 1 });
    expect(resumed.context.variables).toEqual({ seen: 2 });
    expect(resumed.context.subflows.repeat).toEqual({ kind: "loop", total: 3, completed: 3 });
  });

  it("runs a synchronous run with no checkpoints at all", async () => {
    const counted = countedFunctions();
    const result = await run(fourSteps(), counted);
    expect(result.status).toBe("success");
    expect(Object.fromEntries(counted.runs)).toEqual({ one: 1, two: 1, three: 3, four: 1 });
  });

  it("parks at a Wait past the threshold, and resumes after it to the next block", async () => {
    const history: Checkpoint[] = [];
    const counted = countedFunctions();
    const builder = flow()
      .block("before", "function", fn("return 'before';"), { name: "Before" })
      .block("pause", "wait", { amount: 2, unit: "minutes" }, { name: "Pause" })
      .block("after", "function", fn("return 'after';"), { name: "After" })
      .chain("start", "before", "pause", "after");
    const started = Date.now();
    const parked = await run(builder, { ...counted, durable: memoryHistory(history, () => {}, 1_000) });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(parked.status).toBe("parked");
    const resumeAt = Date.parse(parked.resumeAt as string);
    expect(resumeAt - started).toBeGreaterThanOrEqual(120_000);
    expect(history.at(-1)).toEqual({ kind: "timer", key: "pause", dueAt: resumeAt });

    // Resumed a second before the due time: sleeps that second, not two minutes, and goes on.
    let now = resumeAt - 1_000;
    const slept: number[] = [];
    const clock: Clock = { now: () => now, sleep: async (ms) => void (slept.push(ms), (now += ms)) };
    const resumed = await run(builder, { ...counted, services: { clock }, durable: memoryHistory(history, () => {}, 1_000) });
    expect(resumed.status).toBe("success");
    expect(resumed.output).toEqual({ result: "after", stdout: "" });
    expect(slept).toEqual([1_000]);
    expect(Object.fromEntries(counted.runs)).toEqual({ before: 1, after: 1 });
    expect(spansByName(resumed.traceSpans).get("Pause")?.[0].output).toEqual({ waitDuration: 120_000, status: "completed" });
  });

  it("parks a Wait that would outlast the attempt's time, even under the threshold", async () => {
    const builder = flow().block("pause", "wait", wait(3_000), { name: "Pause" }).chain("start", "pause");
    const result = await run(builder, { timeoutMs: 2_500, durable: memoryHistory([], () => {}, 60_000) });
    expect(result.status).toBe("parked");
  });

  it("keeps the 5 minute limit for a Wait in a synchronous run, and allows 30 days in a durable one", async () => {
    const builder = flow().block("pause", "wait", { amount: 10, unit: "minutes" }, { name: "Pause" }).chain("start", "pause");
    expect((await run(builder)).error).toMatchObject({ code: "LIMIT_EXCEEDED", message: expect.stringContaining("5 minute limit") });
    expect((await run(builder, { durable: memoryHistory([], () => {}, 1_000) })).status).toBe("parked");
    const tooLong = flow().block("pause", "wait", { amount: 31 * 24 * 60, unit: "minutes" }, { name: "Pause" }).chain("start", "pause");
    expect((await run(tooLong, { durable: memoryHistory([], () => {}, 1_000) })).error).toMatchObject({ code: "LIMIT_EXCEEDED", message: expect.stringContaining("30 day") });
  });

  it("stops the run when a checkpoint cannot be recorded", async () => {
    const counted = countedFunctions();
    const durable: Durability = { history: [], parkAfterMs: 1_000, record: async (checkpoint) => { if (checkpoint.key === "one") throw new Error("lost the database"); } };
    const result = await run(fourSteps(), { ...counted, durable });
    expect(result.status).toBe("error");
    expect(counted.runs.get("two")).toBeUndefined();
  });

  it("parks at an undecided approval until its timeout, and a resumed run's block returns the decision", async () => {
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    let state: ApprovalState = { decided: false, expiresAt };
    const opened: string[] = [];
    const desk: ApprovalDesk = { open: async (key) => (opened.push(key), state) };
    const history: Checkpoint[] = [];
    const gated = () => flow()
      .block("gate", "approval", { approvers: ["a@x.test"], message: "Go?" }, { name: "Gate" })
      .block("after", "function", fn("return <gate.decision>;"), { name: "After" })
      .chain("start", "gate", "after");
    const parked = await run(gated(), { durable: { ...memoryHistory(history), approvals: desk } });
    expect([parked.status, parked.resumeAt]).toEqual(["parked", expiresAt]);
    expect(history.at(-1)).toEqual({ kind: "timer", key: "gate", dueAt: Date.parse(expiresAt) });

    state = { decided: true, output: { decision: "approved", decidedBy: "quorum", decidedAt: "2026-12-01T00:00:00Z", approvals: [] } };
    const resumed = await run(gated(), { durable: { ...memoryHistory(history), approvals: desk } });
    expect([resumed.status, resumed.output]).toEqual(["success", { result: "approved", stdout: "" }]);
    expect(opened).toEqual(["gate", "gate"]);
  });

  it("parks a run that never parks at a Wait (a sync run's collector) at an undecided approval, however near its timeout", async () => {
    const expiresAt = new Date(Date.now() + 5_000).toISOString();
    const desk: ApprovalDesk = { open: async () => ({ decided: false, expiresAt }) };
    const history: Checkpoint[] = [];
    const parked = await run(flow().block("gate", "approval", { approvers: ["a@x.test"], message: "Go?" }, { name: "Gate" }).chain("start", "gate"), {
      durable: { ...memoryHistory(history, () => {}, null), approvals: desk },
    });
    expect([parked.status, parked.resumeAt]).toEqual(["parked", expiresAt]);
    expect(history.map((checkpoint) => checkpoint.key)).toEqual(["start", "gate"]);
  });

  it("fails an approval in a run that cannot wait for people", async () => {
    const result = await run(flow().block("gate", "approval", { approvers: ["a@x.test"], message: "Go?" }, { name: "Gate" }).chain("start", "gate"));
    expect(result).toMatchObject({ status: "error", error: { code: "BLOCK_FAILED", message: expect.stringContaining("a manual or chat run cannot do") } });
  });
});
