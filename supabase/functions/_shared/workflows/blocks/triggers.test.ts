import { describe, expect, it } from "vitest";
import { testRun } from "./test-run.ts";
import { apiTriggerHandler, scheduleTriggerHandler, webhookTriggerHandler } from "./triggers.ts";

const inputFormat = [{ name: "n", type: "number" as const, value: 4 }];

describe("trigger blocks", () => {
  it("read the request body in API runs and the value column in manual runs", async () => {
    expect(await apiTriggerHandler.execute(testRun({ inputFormat }, { trigger: { kind: "api", input: { n: "2" } } }))).toEqual({ n: 2, input: { n: 2 } });
    expect(await apiTriggerHandler.execute(testRun({ inputFormat }, { trigger: { kind: "manual" } }))).toEqual({ n: 4, input: { n: 4 } });
    expect(await apiTriggerHandler.execute(testRun({ inputFormat }, { trigger: { kind: "manual", input: { n: 9 } } }))).toEqual({ n: 9, input: { n: 9 } });
  });

  it("refuse to run when the run did not start from them", async () => {
    await expect(apiTriggerHandler.execute(testRun({ inputFormat }))).rejects.toThrow("only when the run starts from it");
  });

  it("pass a webhook body through, typing declared fields", async () => {
    expect(await webhookTriggerHandler.execute(testRun({}, { trigger: { kind: "webhook", input: { a: { b: 1 } } } }))).toEqual({ a: { b: 1 } });
    expect(await webhookTriggerHandler.execute(testRun({}, { trigger: { kind: "webhook", input: "text" } }))).toEqual({ body: "text" });
    expect(await webhookTriggerHandler.execute(testRun({ inputFormat }, { trigger: { kind: "webhook", input: { n: "3", other: true } } }))).toEqual({ n: 3, other: true });
  });

  it("report a schedule tick", () => {
    const run = testRun({ cronExpression: " 0 * * * * " }, { trigger: { kind: "schedule", input: { scheduledFor: "2026-01-01T01:00:00.000Z" } } });
    const output = scheduleTriggerHandler.execute({ ...run, services: { ...run.services, clock: { now: () => Date.parse("2026-01-01T01:00:02Z"), sleep: () => Promise.resolve() } } });
    expect(output).toEqual({ scheduledFor: "2026-01-01T01:00:00.000Z", firedAt: "2026-01-01T01:00:02.000Z", cronExpression: "0 * * * *", timezone: "UTC" });
  });
});
