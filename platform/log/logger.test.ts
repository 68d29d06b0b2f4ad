import { describe, expect, it } from "vitest";
import { formatLogLine } from "./logger.ts";

describe("the platform logger", () => {
  it("writes time, level, service and message first, then the event's fields", () => {
    const line = formatLogLine("storage", "warn", "could not delete", { bucket: "docs" }, new Date("2026-01-02T03:04:05.000Z"));
    expect(Object.keys(JSON.parse(line))).toEqual(["time", "level", "service", "message", "bucket"]);
    expect(JSON.parse(line)).toEqual({ time: "2026-01-02T03:04:05.000Z", level: "warn", service: "storage", message: "could not delete", bucket: "docs" });
  });

  it("keeps an Error's name, message and stack, which JSON.stringify would drop", () => {
    const error = Object.assign(new TypeError("boom"), { code: "E_BOOM" });
    const logged = JSON.parse(formatLogLine("auth", "error", "request failed", { error })).error;
    expect(logged).toMatchObject({ name: "TypeError", message: "boom", code: "E_BOOM" });
    expect(logged.stack).toContain("boom");
  });
});
