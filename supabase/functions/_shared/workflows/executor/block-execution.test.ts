import { describe, expect, it } from "vitest";
import { fn, flow, run, spansByName, wait } from "../../../../../test/helpers/workflows/flows.ts";

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
