import { describe, expect, it } from "vitest";
import { testRun } from "../../../../../../test/helpers/workflows/block-run.ts";
import type { ApprovalOutcome, ApprovalRequest } from "../../core/approvals.ts";
import { approvalHandler, approvalRequest } from "./handler.ts";

const decided = (decision: ApprovalOutcome["decision"]): ApprovalOutcome => ({ decision, decidedBy: "timeout", decidedAt: "2026-12-01T00:00:00Z", approvals: [] });

describe("the Approval block", () => {
  it("asks with its defaults: a quorum of 1, a day, rejected when nobody answers", () => {
    expect(approvalRequest({ approvers: ["a@x.test"], message: "Ship?" })).toEqual({
      approvers: ["a@x.test"], quorum: 1, message: "Ship?", fields: [], timeoutMinutes: 1440, defaultOutcome: "reject", reminderMinutesBefore: [],
    });
  });

  it("shows a message whose reference resolved to data as JSON, and refuses one past 10,000 characters", () => {
    expect(approvalRequest({ approverRole: "admin", message: { total: 3 } }).message).toBe('{"total":3}');
    expect(() => approvalRequest({ approverRole: "admin", message: "x".repeat(10_001) })).toThrow(expect.objectContaining({ code: "LIMIT_EXCEEDED" }));
    expect(() => approvalRequest({ approvers: [42], message: "m" })).toThrow("an approver must be an e-mail address (got 42)");
  });

  it("returns the decision, and fails with BLOCK_TIMEOUT when the timeout's outcome is fail", async () => {
    const asked: ApprovalRequest[] = [];
    const run = (decision: ApprovalOutcome["decision"]) => testRun({ approvers: ["a@x.test"], message: "m" }, { awaitApproval: async (request) => (asked.push(request), decided(decision)) });
    await expect(approvalHandler.execute(run("approved"))).resolves.toEqual(decided("approved"));
    await expect(approvalHandler.execute(run("failed"))).rejects.toMatchObject({ code: "BLOCK_TIMEOUT", message: expect.stringContaining("default outcome is fail") });
    expect(asked).toHaveLength(2);
  });
});
