import { describe, expect, it } from "vitest";
import { RequestError } from "./request-error.ts";

describe("request errors", () => {
  it("answer request errors with {error, code} and their status", async () => {
    const response = new RequestError("FORBIDDEN", "no").toResponse();
    expect(response.status).toBe(403);
    expect(await response.json()).toEqual({ error: "no", code: "FORBIDDEN" });
  });

  it("carry validation issues when the workflow is not runnable", async () => {
    const issues = [{ code: "no_trigger" as const, message: "no trigger" }];
    const response = new RequestError("INVALID_WORKFLOW", "no trigger", { issues }).toResponse();
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: "no trigger", code: "INVALID_WORKFLOW", issues });
  });
});
