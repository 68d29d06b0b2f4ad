import { describe, expect, it } from "vitest";
import { WorkflowError } from "../core/errors.ts";
import { memoryFileStore } from "../core/files.ts";
import { applyInputFormat, valueColumn, type InputField } from "./input-format.ts";

const files = memoryFileStore(() => "id1", () => Date.parse("2026-01-01T00:00:00Z"));
const context = { label: "trigger \"API\"", executionId: "run1", files };
const field = (name: string, type: InputField["type"], value?: unknown): InputField => ({ name, type, ...(value === undefined ? {} : { value }) });

describe("applyInputFormat", () => {
  it("coerces each declared type", async () => {
    const fields = [field("s", "string"), field("n", "number"), field("b", "boolean"), field("j", "json"), field("t", "string")];
    const { typed, structured } = await applyInputFormat(fields, { s: 5, n: " 2.5 ", b: "false", j: "[1,2]", t: true, extra: 1 }, context);
    expect(typed).toEqual({ s: "5", n: 2.5, b: false, j: [1, 2], t: "true" });
    expect(structured).toEqual({ s: "5", n: 2.5, b: false, j: [1, 2], t: "true", extra: 1 });
  });

  it("reads fields wrapped in `input`, and gives missing ones as null", async () => {
    const { typed } = await applyInputFormat([field("a", "string"), field("b", "number")], { input: { a: "x" } }, context);
    expect(typed).toEqual({ a: "x", b: null });
  });

  it.each([
    [field("n", "number"), "abc", 'field "n" must be a number (got "abc")'],
    [field("n", "number"), "", 'field "n" must be a number'],
    [field("b", "boolean"), "yes", 'field "b" must be a boolean'],
    [field("s", "string"), { a: 1 }, 'field "s" must be a string'],
    [field("j", "json"), "{oops", 'field "j" must be JSON'],
  ])("refuses %j given %j", async (declared, value, message) => {
    const error = await applyInputFormat([declared], { [declared.name]: value }, context).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(WorkflowError);
    expect((error as WorkflowError).code).toBe("INVALID_INPUT");
    expect((error as WorkflowError).message).toContain(message);
  });

  it("refuses a body that is not an object", async () => {
    await expect(applyInputFormat([field("a", "string")], [1, 2], context)).rejects.toThrow("must be a JSON object");
  });

  it("stores files and accepts a single entry as a list of one", async () => {
    const { typed } = await applyInputFormat([field("doc", "files")], { doc: { type: "url", data: "https://x.test/a.pdf", name: "a.pdf" } }, context);
    expect(typed.doc).toEqual([{ id: "file_id1", name: "a.pdf", url: "https://x.test/a.pdf", size: 0, type: "application/octet-stream", key: "url/a.pdf" }]);
  });
});

describe("valueColumn", () => {
  it("takes each field's editor value", () => {
    expect(valueColumn([field("a", "string", "x"), field("b", "number")])).toEqual({ a: "x" });
  });
});
