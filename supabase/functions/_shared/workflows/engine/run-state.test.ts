import { describe, expect, it } from "vitest";
import { flow, run } from "./test-flows.ts";

describe("the execution context", () => {
  it("lists the workspace's variable names but never their values", async () => {
    const result = await run(flow(), { env: { TOKEN: "abc", OTHER: "def" } });
    expect(result.context.environment).toEqual(["OTHER", "TOKEN"]);
    expect(JSON.stringify(result)).not.toMatch(/abc|def/);
  });
});
