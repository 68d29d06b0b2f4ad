import { describe, expect, it } from "vitest";
import type { InputField } from "../state/catalogue.ts";
import { WorkflowError } from "../engine/errors.ts";
import { applyInputFormat, checkFileEntry, MAX_INLINE_FILE_BYTES, memoryFileStore, valueColumn } from "./input-format.ts";

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

describe("file entries", () => {
  it("checks inline data URLs and their size", () => {
    expect(checkFileEntry({ type: "file", data: "data:image/png;base64,AAAA", name: "a.png" }, "f")).toMatchObject({ size: 3, mimeType: "image/png" });
    expect(() => checkFileEntry({ type: "file", data: "not base64", name: "a" }, "f")).toThrow("base64 data URL");
    const big = "A".repeat(Math.ceil(((MAX_INLINE_FILE_BYTES + 3) * 4) / 3));
    expect(() => checkFileEntry({ type: "file", data: `data:text/plain;base64,${big}`, name: "big.txt" }, "f")).toThrow("at most 20 MB");
  });

  it("accepts only http(s) URLs and well-formed entries", () => {
    expect(() => checkFileEntry({ type: "url", data: "file:///etc/passwd", name: "p" }, "f")).toThrow("http(s)");
    expect(() => checkFileEntry({ type: "url", data: "nope", name: "p" }, "f")).toThrow("is not a URL");
    expect(() => checkFileEntry({ type: "disk", data: "x", name: "p" }, "f")).toThrow(WorkflowError);
  });

  it("stamps stored inline files with a 5 minute expiry", async () => {
    const file = await files.store({ type: "file", data: "data:text/plain;base64,aGk=", name: "hi.txt" }, { executionId: "r", field: "f" });
    expect(file).toMatchObject({ size: 2, uploadedAt: "2026-01-01T00:00:00.000Z", expiresAt: "2026-01-01T00:05:00.000Z", key: "inline/hi.txt" });
  });
});

describe("valueColumn", () => {
  it("takes each field's editor value", () => {
    expect(valueColumn([field("a", "string", "x"), field("b", "number")])).toEqual({ a: "x" });
  });
});
