import { describe, expect, it } from "vitest";
import { z } from "zod";
import { HttpError } from "../http/errors.ts";
import { workflowErrors } from "./workflow-errors.ts";

describe("workflowErrors", () => {
  it("renders {error, code} with the service's codes and status", async () => {
    const response = await workflowErrors.render(workflowErrors.describe({ kind: "not_found", method: "GET", path: "/api/nothing" }));
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: "No route for GET /api/nothing", code: "NOT_FOUND" });
  });

  it("puts object details such as issues beside error and code", async () => {
    const response = await workflowErrors.render(new HttpError(400, "INVALID_WORKFLOW", "The workflow is not valid", { issues: [{ code: "x" }] }));
    expect(await response.json()).toEqual({ error: "The workflow is not valid", code: "INVALID_WORKFLOW", issues: [{ code: "x" }] });
  });

  it("words each toolkit problem with a documented status", () => {
    expect(workflowErrors.describe({ kind: "malformed_json" })).toMatchObject({ status: 400, code: "INVALID_BODY" });
    expect(workflowErrors.describe({ kind: "unstorable_text", part: "body", field: "input.name" })).toMatchObject({ status: 400, code: "INVALID_BODY" });
    expect(workflowErrors.describe({ kind: "expired_token", reason: "JWT expired" })).toMatchObject({ status: 401, code: "UNAUTHORIZED" });
    expect(workflowErrors.describe({ kind: "method_not_allowed", method: "GET", path: "/x", allowed: ["POST"] })).toMatchObject({ status: 405, code: "METHOD_NOT_ALLOWED" });
    expect(workflowErrors.describe({ kind: "internal" })).toMatchObject({ status: 500, code: "INTERNAL" });
  });

  it("names the part of the request at fault and its first issue", () => {
    expect(workflowErrors.describe({ kind: "unstorable_text", part: "query", field: "model" })).toMatchObject({ status: 400, code: "INVALID_QUERY" });
    const parsed = z.object({ limit: z.number().max(1000, "must be at most 1000") }).safeParse({ limit: 5000 });
    const error = workflowErrors.describe({ kind: "invalid_input", part: "query", issues: parsed.error?.issues ?? [] });
    expect(error).toMatchObject({ status: 400, code: "INVALID_QUERY", message: "The request query is not valid: limit must be at most 1000" });
    expect(error.details).toEqual({ issues: [{ path: "limit", message: "must be at most 1000" }] });
  });
});
