import { describe, expect, it } from "vitest";
import { bytesEqual, secretsEqual } from "./constant-time.ts";

describe("constant-time comparison", () => {
  it("tells equal secrets from different ones of any length", async () => {
    expect(await secretsEqual("s3cret-token", "s3cret-token")).toBe(true);
    expect(await secretsEqual("s3cret-token", "s3cret-tokem")).toBe(false);
    expect(await secretsEqual("s3cret", "s3cret-token")).toBe(false);
    expect(await secretsEqual("", "s3cret-token")).toBe(false);
  });

  it("compares byte strings", () => {
    expect(bytesEqual(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2, 3]))).toBe(true);
    expect(bytesEqual(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2, 4]))).toBe(false);
    expect(bytesEqual(new Uint8Array([1, 2]), new Uint8Array([1, 2, 3]))).toBe(false);
  });
});
