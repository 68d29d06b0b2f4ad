import { describe, expect, it } from "vitest";
import { sandboxMode, sandboxPoolSize } from "./sandbox-choice.ts";

describe("where user code runs", () => {
  it("runs inline under Node, and as WORKFLOW_SANDBOX says when it is set", () => {
    expect(sandboxMode(undefined)).toBe("inline");
    expect(sandboxMode("auto")).toBe("inline");
    expect(sandboxMode(" Function ")).toBe("function");
    expect(sandboxMode("workers")).toBe("workers");
    expect(() => sandboxMode("threads")).toThrow('WORKFLOW_SANDBOX must be auto, workers, function, inline (got "threads")');
  });

  it("sizes the pool from WORKFLOW_SANDBOX_WORKERS, else twice the cores from 2 to 16", () => {
    expect(sandboxPoolSize("6")).toBe(6);
    expect(() => sandboxPoolSize("0")).toThrow("WORKFLOW_SANDBOX_WORKERS must be a whole number from 1 to 64");
    expect(sandboxPoolSize(undefined, 1)).toBe(2);
    expect(sandboxPoolSize(undefined, 2)).toBe(4);
    expect(sandboxPoolSize("", 4)).toBe(8);
    expect(sandboxPoolSize(undefined, 32)).toBe(16);
  });
});
