import { describe, expect, it } from "vitest";
import { asRecord, preview } from "./values.ts";

describe("value helpers", () => {
  it("treat only plain objects as records", () => {
    expect(asRecord({ a: 1 })).toEqual({ a: 1 });
    expect([asRecord([1]), asRecord(null), asRecord("x")]).toEqual([null, null, null]);
  });

  it("preview values briefly for messages", () => {
    expect(preview("abc")).toBe('"abc"');
    expect(preview(undefined)).toBe("undefined");
    expect(preview("x".repeat(100), 5)).toBe('"xxxx…');
  });
});
