import { describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH, nestedDeeperThan } from "./json-depth.ts";

const nested = (depth: number) => JSON.parse(`${"[".repeat(depth)}${"]".repeat(depth)}`);

describe("nestedDeeperThan", () => {
  it("accepts JSON nested exactly to the cap and refuses one level more", () => {
    expect(nestedDeeperThan(nested(MAX_JSON_DEPTH))).toBe(false);
    expect(nestedDeeperThan(nested(MAX_JSON_DEPTH + 1))).toBe(true);
  });

  it("counts objects and arrays alike, on any branch", () => {
    // object › b object › c array › object › d array: five levels.
    expect(nestedDeeperThan({ a: 1, b: { c: [{ d: [] }] } }, 5)).toBe(false);
    expect(nestedDeeperThan({ a: 1, b: { c: [{ d: [] }] } }, 4)).toBe(true);
    expect(nestedDeeperThan([1, "x", { late: { deeper: {} } }], 4)).toBe(false);
    expect(nestedDeeperThan([1, "x", { late: { deeper: {} } }], 3)).toBe(true);
  });

  it("treats scalars as depth 0", () => {
    expect(nestedDeeperThan("text", 0)).toBe(false);
    expect(nestedDeeperThan(null, 0)).toBe(false);
    expect(nestedDeeperThan({}, 0)).toBe(true);
  });

  it("measures a value nested far deeper than the call stack allows", () => {
    expect(nestedDeeperThan(nested(100_000))).toBe(true);
  });
});
