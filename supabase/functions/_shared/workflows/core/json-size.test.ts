import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { jsonLength, jsonPrefix } from "./json-size.ts";

describe("JSON sizes without building the text", () => {
  it("measure exactly what JSON.stringify writes, escapes and lone surrogates included", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.string({ unit: "binary" }), (value, text) => {
        expect(jsonLength(value)).toBe(JSON.stringify(value).length);
        const mixed = { text, list: [text, undefined, null], skip: undefined, n: -0.5e-7 };
        expect(jsonLength(mixed)).toBe(JSON.stringify(mixed).length);
      }),
    );
  });

  it("stop past the limit, returning a number above it", () => {
    const big = { rows: Array.from({ length: 100_000 }, (_, index) => ({ index, text: "x".repeat(50) })) };
    expect(JSON.stringify(big).length).toBeGreaterThan(5_000_000);
    expect(jsonLength(big, 1_000)).toBeGreaterThan(1_000);
    expect(jsonLength(big, 1_000)).toBeLessThan(200_000);
  });

  it("remember objects measured in full, and only those", () => {
    const cache = new WeakMap<object, number>();
    const inner = { a: "b" };
    const outer = { inner, list: [inner, inner] };
    expect(jsonLength(outer, Number.POSITIVE_INFINITY, cache)).toBe(JSON.stringify(outer).length);
    expect(cache.get(inner)).toBe(JSON.stringify(inner).length);
    const partial = { text: "y".repeat(100) };
    jsonLength({ partial }, 10, cache);
    expect(cache.has(partial)).toBe(false);
  });

  it("give the start of the JSON text, built no further than asked", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer({ min: 0, max: 200 }), (value, max) => {
        expect(jsonPrefix(value, max)).toBe(JSON.stringify(value).slice(0, max));
      }),
    );
  });
});
