import { describe, expect, it } from "vitest";
import { bulkCancelArguments, bulkCancelBody, cancelBody, MAX_BULK_CANCEL, MAX_CANCEL_REASON_CHARS } from "./runs-cancel-schemas.ts";

const WS = "f3000000-0000-4000-8000-000000000001";

describe("cancel bodies", () => {
  it("take an optional reason of 1 to 500 characters, counted as Postgres counts them", () => {
    expect(cancelBody.parse({})).toEqual({});
    expect(cancelBody.safeParse({ reason: "😀".repeat(MAX_CANCEL_REASON_CHARS) }).success).toBe(true);
    for (const body of [{ reason: "" }, { reason: "x".repeat(MAX_CANCEL_REASON_CHARS + 1) }, { reason: 1 }, { why: "typo" }]) {
      expect(cancelBody.safeParse(body).success, JSON.stringify(body)).toBe(false);
    }
  });

  it("bulk: the list's filters, only in-flight statuses, a cap of 1,000 by default, and the SQL arguments they become", () => {
    const body = bulkCancelBody.parse({ workspaceId: WS, status: "paused", startDate: "2026-11-23T10:00:00+01:00" });
    expect(body.limit).toBe(MAX_BULK_CANCEL);
    expect(bulkCancelArguments("orb_key", body)).toEqual({
      p_api_key: "orb_key", p_workspace_id: WS, p_workflow_id: null, p_status: "paused", p_trigger: null,
      p_start_date: "2026-11-23T09:00:00.000000Z", p_end_date: null, p_limit: MAX_BULK_CANCEL, p_reason: null,
    });
    for (const bad of [{}, { workspaceId: WS, status: "failed" }, { workspaceId: WS, limit: MAX_BULK_CANCEL + 1 }, { workspaceId: WS, limit: 1.5 },
      { workspaceId: WS, startDate: "2026-11-23T10:00:00Z", endDate: "2026-11-23T09:00:00Z" }, { workspaceId: WS, cursor: "x" }]) {
      expect(bulkCancelBody.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    }
  });
});
