import { describe, expect, it } from "vitest";
import { rerunBody } from "./runs-rerun-schemas.ts";

const messages = (body: unknown) => rerunBody.safeParse(body).error?.issues.map((issue) => `${issue.path.join(".")} ${issue.message}`);

describe("the POST /api/v2/runs/{runId}/rerun body", () => {
  it("is empty for the original input, or names a new input or a block", () => {
    expect(rerunBody.parse({})).toEqual({});
    expect(rerunBody.parse({ input: { name: "Bea" } })).toEqual({ input: { name: "Bea" } });
    expect(rerunBody.parse({ input: [1, 2] })).toEqual({ input: [1, 2] });
    expect(rerunBody.parse({ fromBlock: " greet " })).toEqual({ fromBlock: "greet" });
  });

  it("refuses a null input, an empty or overlong block, both at once, and any other field", () => {
    expect(messages({ input: null })).toEqual(["input must not be null; send {} for an empty input"]);
    expect(messages({ fromBlock: "  " })).toEqual(["fromBlock must name a block"]);
    expect(rerunBody.safeParse({ fromBlock: "b".repeat(256) }).success).toBe(false);
    expect(messages({ input: {}, fromBlock: "greet" })).toEqual(["fromBlock cannot be combined with input: a re-run from a block replays the original's trigger and its input"]);
    expect(rerunBody.safeParse({ fromblock: "greet" }).success).toBe(false);
    expect(rerunBody.safeParse([{ fromBlock: "greet" }]).success).toBe(false);
  });
});
