import { describe, expect, it } from "vitest";
import { blockSpanId, incomingTrace, traceHeaders } from "./trace-context.ts";

describe("incomingTrace", () => {
  it("joins a valid traceparent, keeping its tracestate", () => {
    const headers = new Headers({ traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", tracestate: "vendor=1,other=x" });
    expect(incomingTrace(headers)).toEqual({ traceId: "4bf92f3577b34da6a3ce929d0e0e4736", parentSpanId: "00f067aa0ba902b7", traceState: "vendor=1,other=x" });
  });

  it.each([
    ["absent", null],
    ["malformed", "not-a-traceparent"],
    ["an all-zero trace id", "00-00000000000000000000000000000000-00f067aa0ba902b7-01"],
    ["an all-zero span id", "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01"],
    ["version ff", "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"],
    ["upper-case hex", "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01"],
  ])("starts a new trace when the traceparent is %s", (_label, value) => {
    const headers = new Headers(value === null ? {} : { traceparent: value });
    expect(incomingTrace(headers)).toBeNull();
  });
});

describe("traceHeaders", () => {
  it("formats a sampled traceparent that incomingTrace reads back", () => {
    const headers = traceHeaders("4bf92f3577b34da6a3ce929d0e0e4736", "1111111111111111", "vendor=1");
    expect(headers).toEqual({ traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-1111111111111111-01", tracestate: "vendor=1" });
    expect(incomingTrace(new Headers(headers))?.parentSpanId).toBe("1111111111111111");
  });
});

describe("blockSpanId", () => {
  it("is a stable 16-digit hex id per block instance, distinct between instances", () => {
    const a = blockSpanId("1111111111111111", "fn1");
    expect(a).toMatch(/^[0-9a-f]{16}$/);
    expect(blockSpanId("1111111111111111", "fn1")).toBe(a);
    expect(blockSpanId("1111111111111111", "fn1[loop1:2]")).not.toBe(a);
    expect(blockSpanId("2222222222222222", "fn1")).not.toBe(a);
  });
});
