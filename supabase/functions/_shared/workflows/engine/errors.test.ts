import { describe, expect, it } from "vitest";
import { BlockError, messageOf, ValidationError, WorkflowError } from "./errors.ts";

describe("workflow errors", () => {
  it("carry a stable code, and a block when they belong to one", () => {
    const block = { id: "b1", name: "Send", type: "function" };
    const error = new BlockError("BLOCK_TIMEOUT", "too slow", block);
    expect(error).toBeInstanceOf(WorkflowError);
    expect(error).toMatchObject({ code: "BLOCK_TIMEOUT", message: "too slow", block, name: "BlockError" });
  });

  it("summarise validation issues in the message and keep them all", () => {
    const issues = [
      { code: "cycle" as const, message: "first" },
      { code: "self_edge" as const, message: "second" },
      { code: "self_edge" as const, message: "third" },
    ];
    expect(new ValidationError(issues).message).toBe("first (and 2 more issues)");
    expect(new ValidationError(issues.slice(0, 2)).message).toBe("first (and 1 more issue)");
    expect(new ValidationError(issues.slice(0, 1)).issues).toHaveLength(1);
  });

  it("read a message from anything thrown", () => {
    expect([messageOf(new Error("e")), messageOf("s"), messageOf({ a: 1 })]).toEqual(["e", "s", '{"a":1}']);
  });
});
