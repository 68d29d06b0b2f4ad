import { describe, expect, it } from "vitest";
import { WorkflowError } from "./errors.ts";
import { checkFileEntry, MAX_INLINE_FILE_BYTES, memoryFileStore } from "./files.ts";

const files = memoryFileStore(() => "id1", () => Date.parse("2026-01-01T00:00:00Z"));

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
