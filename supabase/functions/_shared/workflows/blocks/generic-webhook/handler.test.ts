import { describe, expect, it } from "vitest";
import { testRun } from "../../../../../../test/helpers/workflows/block-run.ts";
import { webhookTriggerHandler } from "./handler.ts";

const inputFormat = [{ name: "n", type: "number" as const }];

describe("the webhook trigger", () => {
  it("passes a webhook body through, typing declared fields", async () => {
    expect(await webhookTriggerHandler.execute(testRun({}, { trigger: { kind: "webhook", input: { a: { b: 1 } } } }))).toEqual({ a: { b: 1 } });
    expect(await webhookTriggerHandler.execute(testRun({}, { trigger: { kind: "webhook", input: "text" } }))).toEqual({ body: "text" });
    expect(await webhookTriggerHandler.execute(testRun({ inputFormat }, { trigger: { kind: "webhook", input: { n: "3", other: true } } }))).toEqual({ n: 3, other: true });
  });
});
