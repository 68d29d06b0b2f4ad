import { describe, expect, it } from "vitest";
import { WorkflowError } from "../core/errors.ts";
import { ValidationError } from "./issues.ts";

describe("validation errors", () => {
  it("are workflow errors that summarise validation issues in the message and keep them all", () => {
    const issues = [
      { code: "cycle" as const, message: "first" },
      { code: "self_edge" as const, message: "second" },
      { code: "self_edge" as const, message: "third" },
    ];
    expect(new ValidationError(issues).message).toBe("first (and 2 more issues)");
    expect(new ValidationError(issues.slice(0, 2)).message).toBe("first (and 1 more issue)");
    expect(new ValidationError(issues.slice(0, 1)).issues).toHaveLength(1);
    expect(new ValidationError(issues)).toBeInstanceOf(WorkflowError);
    expect(new ValidationError(issues).code).toBe("INVALID_WORKFLOW");
  });
});
