import { describe, expect, it } from "vitest";
import { functionHandler } from "./handler.ts";
import { testRun } from "../../../../../../test/helpers/workflows/block-run.ts";

const code = (source: string, values: unknown[] = []) => ({ kind: "code" as const, source, values });

describe("the Function block", () => {
  it("returns the code's result and printed output", async () => {
    expect(await functionHandler.execute(testRun({ code: code("console.log('n', __refs[0]); return __refs[0] + 1;", [41]) }))).toEqual({ result: 42, stdout: "n 41" });
  });

  it("applies its memory limit", async () => {
    const run = testRun({ code: code("const a = []; while (true) a.push({ i: a.length });"), memoryLimitMb: 2 });
    await expect(functionHandler.execute(run)).rejects.toMatchObject({ code: "SANDBOX_MEMORY_LIMIT", message: expect.stringContaining("2 MiB") });
  });

  it("is stopped at its deadline", async () => {
    await expect(functionHandler.execute(testRun({ code: code("while (true) {}") }, { deadline: Date.now() + 30 }))).rejects.toMatchObject({ code: "SANDBOX_TIMEOUT" });
  });
});
