import { describe, expect, it } from "vitest";
import { MAX_BLOCK_OUTPUT_CHARS, MAX_RUN_ITERATIONS } from "../core/limits.ts";
import { flow, run } from "../../../../../test/helpers/workflows/flows.ts";

/** A manual run whose input is `{data}`, `chars` long. */
function withData(chars: number) {
  return { trigger: { kind: "manual" as const, input: { data: "d".repeat(chars) } } };
}

describe("the run's budgets", () => {
  it("counts the iterations of nested loops together and stops at the budget, naming the inner loop", async () => {
    const builder = flow()
      .loop("outer", { nodes: ["inner"], loopType: "for", iterations: 200 }, { name: "Outer" })
      .loop("inner", { nodes: ["note"], loopType: "for", iterations: 200 }, { name: "Inner" })
      .block("note", "variables", { assignments: [{ name: "at", value: "<inner.index>" }] }, { name: "Note" })
      .edge("start", "outer")
      .edge("outer", "inner", "loop-start")
      .edge("inner", "note", "loop-start");
    const result = await run(builder);
    expect(result.error).toMatchObject({ code: "LIMIT_EXCEEDED", block: { id: "inner" } });
    // 200 outer iterations, then 200 per inner loop: 49 inner loops fill the budget, the 50th does not fit.
    expect(result.error?.message).toBe(
      `Block "Inner" (loop): asks for 200 iterations, but the run has already used 10,000 of the ${MAX_RUN_ITERATIONS.toLocaleString("en")} iterations and branches its loops and parallels may have together (in iteration 49 of loop "Outer")`,
    );
  });

  it("lets a run use its whole iteration budget", async () => {
    const builder = flow()
      .loop("outer", { nodes: ["fan"], loopType: "for", iterations: 10 }, { name: "Outer" })
      .parallel("fan", { nodes: ["note"], parallelType: "count", count: 999 }, { name: "Fan" })
      .block("note", "variables", { assignments: [{ name: "at", value: "<parallel.index>" }] }, { name: "Note" })
      .edge("start", "outer")
      .edge("outer", "fan", "loop-start")
      .edge("fan", "note", "parallel-start");
    expect((await run(builder)).status).toBe("success");
  });

  it("fails a block whose output is over the budget, and its error edge can take over", async () => {
    const builder = flow()
      .block("copy", "variables", { assignments: [{ name: "copy", value: "<start.input.data>" }] }, { name: "Copy" })
      .block("fallback", "variables", { assignments: [{ name: "why", value: "<copy.code>" }] }, { name: "Fallback" })
      .chain("start", "copy")
      .edge("copy", "fallback", "error");
    const result = await run(builder, withData(MAX_BLOCK_OUTPUT_CHARS + 1));
    expect(result.status).toBe("success");
    expect(result.output).toEqual({ why: "OUTPUT_TOO_LARGE" });
    const copySpan = result.traceSpans.find((span) => span.blockId === "copy");
    expect(copySpan?.error).toBe('Block "Copy" (variables): its output is larger than the budget of 4 MiB (4,194,304 characters of JSON) for one block');
  });

  it("fails the block whose output takes the run's outputs past their budget", async () => {
    const builder = flow()
      .loop("each", { nodes: ["copy"], loopType: "for", iterations: 20 }, { name: "Each" })
      .block("copy", "variables", { assignments: [{ name: "copy", value: "<start.input.data>" }] }, { name: "Copy" })
      .edge("start", "each")
      .edge("each", "copy", "loop-start");
    // Each copy is 4,000,012 characters of JSON; eight fit in 32 MiB, the ninth does not.
    const result = await run(builder, withData(4_000_000 - 11));
    expect(result.error).toMatchObject({ code: "OUTPUT_TOO_LARGE", block: { id: "copy" } });
    expect(result.error?.message).toBe(
      'Block "Copy" (variables): the outputs of the run\'s blocks together passed their budget of 32 MiB (33,554,432 characters of JSON) with this block\'s (in iteration 8 of loop "Each")',
    );
  });

  it("does not charge the trigger's output, which is the request", async () => {
    const result = await run(flow(), withData(MAX_BLOCK_OUTPUT_CHARS * 2));
    expect(result.status).toBe("success");
  });

  it("fails a Function whose result is over the budget before it leaves the sandbox", async () => {
    const builder = flow().block("big", "function", { code: `return 'x'.repeat(${MAX_BLOCK_OUTPUT_CHARS});` }, { name: "Big" }).chain("start", "big");
    const result = await run(builder);
    expect(result.error).toMatchObject({ code: "OUTPUT_TOO_LARGE", block: { id: "big" } });
    expect(result.error?.message).toContain("its result is 4,194,306 characters of JSON");
  });
});
