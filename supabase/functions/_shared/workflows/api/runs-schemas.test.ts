import { describe, expect, it } from "vitest";
import { encodeCursor } from "./keyset-cursor.ts";
import { runsArguments, runsQuery } from "./runs-schemas.ts";

const workspaceId = "4b2a5b4e-9d1c-4f6e-8a7b-0c1d2e3f4a5b";
const workflowId = "9f4c2a10-3b7e-4d58-8f6a-2c1d0e5b7a94";
const parse = (query: Record<string, string>) => runsQuery.safeParse({ workspaceId, ...query });
const messages = (query: Record<string, string>) => runsQuery.safeParse(query).error?.issues.map((issue) => `${issue.path.join(".")} ${issue.message}`);

describe("the GET /api/v2/runs query", () => {
  it("defaults to the newest 50 runs of the workspace, unfiltered", () => {
    expect(runsArguments("orb_key", runsQuery.parse({ workspaceId }))).toEqual({
      p_api_key: "orb_key", p_workspace_id: workspaceId, p_workflow_id: null, p_status: null, p_trigger: null, p_start_date: null,
      p_end_date: null, p_limit: 50, p_cursor_created_at: null, p_cursor_id: null, p_order: "desc",
    });
  });

  it("needs a workspace or a workflow, and takes a workflow alone", () => {
    expect(messages({})).toEqual(["workspaceId is required unless workflowId is given"]);
    expect(runsArguments("k", runsQuery.parse({ workflowId }))).toMatchObject({ p_workspace_id: null, p_workflow_id: workflowId });
  });

  it("takes Sim's statuses and the five triggers, one of each", () => {
    for (const status of ["queued", "running", "paused", "completed", "failed", "cancelled"]) expect(parse({ status }).data?.status).toBe(status);
    for (const status of ["pending", "success", "error", "COMPLETED", "completed,failed", ""]) expect(parse({ status }).success, status).toBe(false);
    expect(parse({ trigger: "chat" }).data?.trigger).toBe("chat");
    expect(parse({ trigger: "api,chat" }).success).toBe(false);
  });

  it("caps the page at 100 and refuses what is not a whole number in range", () => {
    expect(parse({ limit: "100" }).data?.limit).toBe(100);
    expect(parse({ limit: "1" }).data?.limit).toBe(1);
    for (const limit of ["101", "1000", "0", "-1", "5.0", "1e2", ""]) expect(parse({ limit }).success, limit).toBe(false);
  });

  it("takes a time range that does not end before it starts, at the microsecond", () => {
    expect(parse({ startDate: "2026-11-23T10:15:00.123456Z", endDate: "2026-11-23T12:15:00.123456+02:00" }).data).toMatchObject({
      startDate: "2026-11-23T10:15:00.123456Z", endDate: "2026-11-23T10:15:00.123456Z",
    });
    expect(messages({ workspaceId, startDate: "2026-11-23T10:15:00.000001Z", endDate: "2026-11-23T10:15:00Z" })).toEqual(["startDate must not be after endDate"]);
    for (const value of ["2026-11-23", "yesterday", "2026-02-30T00:00:00Z"]) expect(parse({ endDate: value }).success, value).toBe(false);
  });

  it("takes a cursor only for the order it was written for, and only as written", () => {
    const cursor = encodeCursor({ at: "2026-11-23T10:15:00.123456Z", id: workflowId, order: "asc" });
    expect(runsArguments("k", runsQuery.parse({ workspaceId, cursor, order: "asc" }))).toMatchObject({ p_cursor_created_at: "2026-11-23T10:15:00.123456Z", p_cursor_id: workflowId });
    expect(parse({ cursor }).success).toBe(false);
    expect(parse({ cursor: `${cursor}x`, order: "asc" }).success).toBe(false);
  });

  it("refuses parameters it does not know", () => {
    expect(parse({ workflowIds: workflowId }).success).toBe(false);
    expect(parse({ triggers: "api" }).success).toBe(false);
  });
});
