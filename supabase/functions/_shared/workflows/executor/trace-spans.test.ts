import { describe, expect, it } from "vitest";
import { fn, flow, run } from "../../../../../test/helpers/workflows/flows.ts";

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
    expect(one).toMatchObject({ blockId: "one", type: "function", status: "success", output: { result: 5, stdout: "hi" }, input: { code: "console.log('hi'); return <start.input.x>;" } });
    expect(JSON.stringify(result.traceSpans)).not.toContain("__refs");
    expect(Date.parse(one.endedAt)).toBeGreaterThanOrEqual(Date.parse(one.startedAt));
    expect(one.durationMs).toBeGreaterThanOrEqual(0);
    expect(two).toMatchObject({ status: "error", error: 'Block "Two" (function): Error: nope (line 1)', errorCode: "BLOCK_FAILED", errorHandled: true });
    expect(seen).toEqual(["Start", "One", "Two", "catch"]);
    expect(result.metadata).toMatchObject({ trigger: "manual", triggerBlockId: "start", blocksExecuted: 4 });
  });
});
