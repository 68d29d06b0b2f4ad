import { describe, expect, it } from "vitest";
import { BlockError, describeBlock, messageOf, WorkflowError } from "./errors.ts";

describe("workflow errors", () => {
  it("carry a stable code, and a block when they belong to one", () => {
    const block = { id: "b1", name: "Send", type: "function" };
    const error = new BlockError("BLOCK_TIMEOUT", "too slow", block);
    expect(error).toBeInstanceOf(WorkflowError);
    expect(error).toMatchObject({ code: "BLOCK_TIMEOUT", message: "too slow", block, name: "BlockError" });
  });

  it("name a block the same way in every message", () => {
    expect(describeBlock({ name: "Check age", type: "condition" })).toBe('Block "Check age" (condition)');
  });

  it("read a message from anything thrown", () => {
    expect([messageOf(new Error("e")), messageOf("s"), messageOf({ a: 1 })]).toEqual(["e", "s", '{"a":1}']);
  });
});
