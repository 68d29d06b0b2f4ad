import { describe, expect, it } from "vitest";
import { parseGoDuration } from "./durations.ts";

describe("parseGoDuration", () => {
  it("reads the units and compound forms Go's time.ParseDuration reads", () => {
    expect(parseGoDuration("24h")).toBe(86_400_000);
    expect(parseGoDuration("1h30m")).toBe(5_400_000);
    expect(parseGoDuration("1.5s")).toBe(1500);
    expect(parseGoDuration("300ms")).toBe(300);
    expect(parseGoDuration("-5m")).toBe(-300_000);
    expect(parseGoDuration("0")).toBe(0);
    expect(parseGoDuration("876000h")).toBe(876_000 * 3_600_000);
  });

  it("refuses what Go refuses, with Go's messages", () => {
    expect(() => parseGoDuration("1 day")).toThrow('time: unknown unit " day" in duration "1 day"');
    expect(() => parseGoDuration("10")).toThrow('time: missing unit in duration "10"');
    expect(() => parseGoDuration("1d")).toThrow('time: unknown unit "d" in duration "1d"');
    expect(() => parseGoDuration("")).toThrow('time: invalid duration ""');
    expect(() => parseGoDuration("h")).toThrow('time: invalid duration "h"');
  });
});
