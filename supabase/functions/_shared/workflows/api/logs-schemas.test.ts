import { describe, expect, it } from "vitest";
import { encodeCursor } from "./keyset-cursor.ts";
import { logsArguments, logsQuery } from "./logs-schemas.ts";

const workspaceId = "4b2a5b4e-9d1c-4f6e-8a7b-0c1d2e3f4a5b";
const parse = (query: Record<string, string>) => logsQuery.safeParse({ workspaceId, ...query });

describe("the GET /api/v1/logs query", () => {
  it("defaults to the newest 100 basic entries, without trace spans or output", () => {
    expect(logsArguments("orb_key", logsQuery.parse({ workspaceId }))).toMatchObject({
      p_api_key: "orb_key", p_workspace_id: workspaceId, p_limit: 100, p_order: "desc", p_details: "basic",
      p_include_trace_spans: false, p_include_final_output: false, p_workflow_ids: null, p_cursor_started_at: null, p_cursor_id: null,
    });
  });

  it("reads booleans for what they say: false is false", () => {
    expect(parse({ includeTraceSpans: "false", includeFinalOutput: "true" }).data).toMatchObject({ includeTraceSpans: false, includeFinalOutput: true });
    expect(parse({ includeTraceSpans: "1", includeFinalOutput: "0" }).data).toMatchObject({ includeTraceSpans: true, includeFinalOutput: false });
    for (const value of ["", "yes", "TRUE", "no", "2"]) expect(parse({ includeTraceSpans: value }).success, value).toBe(false);
  });

  it("splits lists, drops repeats and checks each item", () => {
    expect(parse({ triggers: "api,chat,api" }).data?.triggers).toEqual(["api", "chat"]);
    expect(parse({ workflowIds: `${workspaceId},${workspaceId}` }).data?.workflowIds).toEqual([workspaceId]);
    expect(parse({ triggers: "api,,chat" }).success).toBe(false);
    expect(parse({ workflowIds: Array.from({ length: 101 }, () => workspaceId).join(",") }).success).toBe(false);
  });

  it("keeps a date's microseconds and converts its zone to UTC", () => {
    expect(parse({ startDate: "2026-11-23T12:15:00.123456+02:00" }).data?.startDate).toBe("2026-11-23T10:15:00.123456Z");
    expect(parse({ endDate: "2026-11-23T10:15:00Z" }).data?.endDate).toBe("2026-11-23T10:15:00.000000Z");
    expect(parse({ endDate: "2026-11-23T10:15:00.1234567Z" }).data?.endDate).toBe("2026-11-23T10:15:00.123456Z");
    for (const value of ["2026-11-23", "2026-11-23T10:15:00", "0000-01-01T00:00:00Z", "2026-02-30T00:00:00Z", "tomorrow"]) {
      expect(parse({ startDate: value }).success, value).toBe(false);
    }
  });

  it("takes whole milliseconds, decimal dollars and limits in range", () => {
    expect(parse({ minDurationMs: "0", maxDurationMs: "2147483647", minCost: "0.0001", maxCost: "12" }).data).toMatchObject({ minDurationMs: 0, maxDurationMs: 2147483647, minCost: "0.0001", maxCost: "12" });
    for (const [name, value] of [["minDurationMs", "2147483648"], ["maxDurationMs", "-1"], ["minCost", "-0.5"], ["maxCost", "1e2"], ["limit", "1001"], ["limit", "0"], ["limit", "5.0"]]) {
      expect(parse({ [name]: value }).success, `${name}=${value}`).toBe(false);
    }
    expect(parse({ limit: "1000" }).data?.limit).toBe(1000);
  });

  it("takes a cursor only for the order it was written for", () => {
    const cursor = encodeCursor({ at: "2026-11-23T10:15:00.123456Z", id: workspaceId, order: "asc" });
    expect(logsArguments("k", logsQuery.parse({ workspaceId, cursor, order: "asc" }))).toMatchObject({ p_cursor_started_at: "2026-11-23T10:15:00.123456Z", p_cursor_id: workspaceId });
    expect(parse({ cursor }).success).toBe(false);
  });

  it("refuses parameters it does not know", () => {
    expect(parse({ workflowId: workspaceId }).success).toBe(false);
    expect(logsQuery.safeParse({}).error?.issues[0]).toMatchObject({ path: ["workspaceId"], message: "is required" });
  });
});
