import { describe, expect, it } from "vitest";
import { WorkflowBuilder } from "../state/state-builder.ts";
import { runWorkflow } from "../runs/run-workflow.ts";
import { flow } from "../../../../../test/helpers/workflows/flows.ts";

describe("triggers", () => {
  const inputFormat = [
    { name: "name", type: "string", value: "Ana" },
    { name: "age", type: "number", value: 30 },
    { name: "vip", type: "boolean", value: "true" },
    { name: "meta", type: "json", value: '{"a":1}' },
  ];

  it("gives the API trigger's typed fields and the structured body as <api.field> and <api.input>", async () => {
    const builder = new WorkflowBuilder()
      .block("api", "api_trigger", { inputFormat }, { name: "API" })
      .block("read", "variables", { assignments: [{ name: "age", value: "<api.age>" }, { name: "input", value: "<api.input>" }, { name: "nested", value: "<api.input.meta.a>" }] })
      .chain("api", "read");
    const result = await runWorkflow({ workflow: builder.build(), trigger: { kind: "api", input: { name: "Bo", age: "41", vip: false, meta: { a: 2 }, extra: "kept" } } });
    expect(result.context.blockStates.api.output).toEqual({ name: "Bo", age: 41, vip: false, meta: { a: 2 }, input: { name: "Bo", age: 41, vip: false, meta: { a: 2 }, extra: "kept" } });
    expect(result.context.variables).toEqual({ age: 41, input: { name: "Bo", age: 41, vip: false, meta: { a: 2 }, extra: "kept" }, nested: 2 });
  });

  it("uses the value column in a manual run of an API-triggered workflow", async () => {
    const builder = new WorkflowBuilder().block("api", "api_trigger", { inputFormat }, { name: "API" });
    const result = await runWorkflow({ workflow: builder.build(), trigger: { kind: "manual" } });
    expect(result.output).toEqual({ name: "Ana", age: 30, vip: true, meta: { a: 1 }, input: { name: "Ana", age: 30, vip: true, meta: { a: 1 } } });
  });

  it("exposes only the raw body as <api.input> without an Input Format, and missing fields as null", async () => {
    const bare = await runWorkflow({ workflow: new WorkflowBuilder().block("api", "api_trigger", {}, { name: "API" }).build(), trigger: { kind: "api", input: { anything: [1] } } });
    expect(bare.output).toEqual({ input: { anything: [1] } });
    const missing = await runWorkflow({ workflow: new WorkflowBuilder().block("api", "api_trigger", { inputFormat }, { name: "API" }).build(), trigger: { kind: "api", input: {} } });
    expect(missing.output).toMatchObject({ name: null, age: null });
  });

  it("refuses input that does not fit its type, naming the field", async () => {
    const result = await runWorkflow({ workflow: new WorkflowBuilder().block("api", "api_trigger", { inputFormat }, { name: "API" }).build(), trigger: { kind: "api", input: { age: "old" } } });
    expect(result.error).toMatchObject({ code: "INVALID_INPUT", block: { id: "api" } });
    expect(result.error?.message).toContain('field "age" must be a number (got "old")');
  });

  it("turns files entries into UserFiles", async () => {
    const builder = new WorkflowBuilder().block("api", "api_trigger", { inputFormat: [{ name: "docs", type: "files" }] }, { name: "API" });
    const result = await runWorkflow({
      workflow: builder.build(),
      trigger: { kind: "api", input: { docs: [{ type: "file", data: "data:text/plain;base64,aGVsbG8=", name: "a.txt" }, { type: "url", data: "https://example.com/b.pdf", name: "b.pdf", mime: "application/pdf" }] } },
    });
    const docs = (result.output as { docs: Record<string, unknown>[] }).docs;
    expect(docs[0]).toMatchObject({ name: "a.txt", size: 5, type: "text/plain", url: "data:text/plain;base64,aGVsbG8=" });
    expect(docs[0].expiresAt).toBeTypeOf("string");
    expect(docs[1]).toMatchObject({ name: "b.pdf", size: 0, type: "application/pdf", url: "https://example.com/b.pdf", key: "url/b.pdf" });
    expect(docs[1].uploadedAt).toBeUndefined();
  });

  it("starts webhook and schedule runs from their triggers", async () => {
    const state = new WorkflowBuilder()
      .block("hook", "generic_webhook", {}, { name: "Webhook 1" })
      .block("tick", "schedule", { cronExpression: "*/5 * * * *" }, { name: "Every 5" })
      .block("from_hook", "variables", { assignments: [{ name: "who", value: "<webhook1.user.name>" }] })
      .block("from_tick", "variables", { assignments: [{ name: "when", value: "<every5.scheduledFor>" }] })
      .edge("hook", "from_hook")
      .edge("tick", "from_tick")
      .build();
    const hook = await runWorkflow({ workflow: state, trigger: { kind: "webhook", input: { user: { name: "Ana" } } } });
    expect(hook.context.variables).toEqual({ who: "Ana" });
    const tick = await runWorkflow({ workflow: state, trigger: { kind: "schedule", input: { scheduledFor: "2026-01-01T00:05:00.000Z" } } });
    expect(tick.context.variables).toEqual({ when: "2026-01-01T00:05:00.000Z" });
  });

  it("refuses a trigger kind the workflow lacks", async () => {
    await expect(runWorkflow({ workflow: flow().build(), trigger: { kind: "api" } })).rejects.toMatchObject({ code: "INVALID_INPUT" });
  });
});
