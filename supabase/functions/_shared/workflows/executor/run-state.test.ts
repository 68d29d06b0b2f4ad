import { describe, expect, it } from "vitest";
import { flow, run } from "../../../../../test/helpers/workflows/flows.ts";

describe("the execution context", () => {
  it("lists the workspace's variable names but never their values", async () => {
    // Values no random execution id or timestamp can contain ("abc" and "def" are hex, and a
    // random UUID held one in about one run in seventy).
    const result = await run(flow(), { env: { TOKEN: "token-value-secret", OTHER: "other-value-secret" } });
    expect(result.context.environment).toEqual(["OTHER", "TOKEN"]);
    expect(JSON.stringify(result)).not.toMatch(/token-value-secret|other-value-secret/);
  });
});
