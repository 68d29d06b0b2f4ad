import { describe, expect, it } from "vitest";
import { testRun } from "../../../../../../test/helpers/workflows/block-run.ts";
import { apiTriggerHandler } from "./handler.ts";

const inputFormat = [{ name: "n", type: "number" as const, value: 4 }];

describe("the API trigger", () => {
  it("reads the request body in API runs and the value column in manual runs", async () => {
    expect(await apiTriggerHandler.execute(testRun({ inputFormat }, { trigger: { kind: "api", input: { n: "2" } } }))).toEqual({ n: 2, input: { n: 2 } });
    expect(await apiTriggerHandler.execute(testRun({ inputFormat }, { trigger: { kind: "manual" } }))).toEqual({ n: 4, input: { n: 4 } });
    expect(await apiTriggerHandler.execute(testRun({ inputFormat }, { trigger: { kind: "manual", input: { n: 9 } } }))).toEqual({ n: 9, input: { n: 9 } });
  });

  it("refuses to run when the run did not start from it", async () => {
    await expect(apiTriggerHandler.execute(testRun({ inputFormat }))).rejects.toThrow("only when the run starts from it");
  });
});
