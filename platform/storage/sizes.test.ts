import { describe, expect, it } from "vitest";
import { parseBucketSize, parseConfigSize } from "./sizes.ts";

describe("config.toml sizes", () => {
  it("reads units as binary, as the Supabase CLI does", () => {
    expect(parseConfigSize("50MiB")).toBe(50 * 1024 ** 2);
    expect(parseConfigSize("5MB")).toBe(5 * 1024 ** 2);
    expect(parseConfigSize("500KB")).toBe(500 * 1024);
    expect(parseConfigSize("1gb")).toBe(1024 ** 3);
    expect(parseConfigSize("42")).toBe(42);
    expect(parseConfigSize(1000)).toBe(1000);
  });

  it("refuses what is not a size", () => {
    expect(parseConfigSize("lots")).toBeNull();
    expect(parseConfigSize("5 parsecs")).toBeNull();
    expect(parseConfigSize(-1)).toBeNull();
  });
});

describe("bucket sizes", () => {
  it("reads Storage's decimal units", () => {
    expect(parseBucketSize("20MB")).toBe(20_000_000);
    expect(parseBucketSize("300kb")).toBe(300_000);
    expect(parseBucketSize("1.5GB")).toBe(1_500_000_000);
    expect(parseBucketSize("3B")).toBe(3);
  });

  it("refuses binary units and bare numbers in strings, as Storage does", () => {
    expect(parseBucketSize("20MiB")).toBeNull();
    expect(parseBucketSize("20")).toBeNull();
  });
});
