/**
 * Approval: asks people to approve or reject, and waits. An API run (async, or sync and streamed,
 * whose request answers paused and hands the run to the async path) can wait for people; manual and
 * chat runs cannot. The block opens its approval (the approvers get e-mailed links), parks the run until the
 * timeout (no worker, lease or connection held), and when the approval is decided — a quorum of
 * approvals, a rejection that puts the quorum out of reach, a program's answer, or the timeout's
 * default outcome — the run resumes and the block returns the decision (executor/durable.ts
 * `awaitApproval`). A timeout whose default outcome is `fail` fails the block (BLOCK_TIMEOUT), which
 * an error edge may handle.
 */
import type { BlockHandler } from "../../core/block-handler.ts";
import type { ApprovalField, ApprovalRequest } from "../../core/approvals.ts";
import { WorkflowError } from "../../core/errors.ts";
import { preview } from "../../core/values.ts";
import { APPROVAL_LIMITS } from "./config.ts";

interface ApprovalInput {
  approvers?: unknown[];
  approverRole?: ApprovalRequest["approverRole"];
  quorum?: number;
  message: unknown;
  fields?: ApprovalField[];
  timeoutMinutes?: number;
  defaultOutcome?: ApprovalRequest["defaultOutcome"];
  reminderMinutesBefore?: number[];
}

/** The request an approval block makes of its resolved config; references must have resolved to text. */
export function approvalRequest(input: ApprovalInput): ApprovalRequest {
  const message = typeof input.message === "string" ? input.message : JSON.stringify(input.message ?? null);
  if (message.trim() === "" || message.length > APPROVAL_LIMITS.messageChars) {
    throw new WorkflowError("LIMIT_EXCEEDED", `the message must be 1 to ${APPROVAL_LIMITS.messageChars} characters once its references are filled in (got ${message.length})`);
  }
  const approvers = input.approvers?.map((approver) => {
    if (typeof approver !== "string") throw new WorkflowError("BLOCK_FAILED", `an approver must be an e-mail address (got ${preview(approver)})`);
    return approver;
  });
  return {
    ...(approvers ? { approvers } : {}),
    ...(input.approverRole ? { approverRole: input.approverRole } : {}),
    quorum: input.quorum ?? 1,
    message,
    fields: input.fields ?? [],
    timeoutMinutes: input.timeoutMinutes ?? APPROVAL_LIMITS.defaultTimeoutMinutes,
    defaultOutcome: input.defaultOutcome ?? "reject",
    reminderMinutesBefore: input.reminderMinutesBefore ?? [],
  };
}

/** Handler of `approval` blocks. Its own timeout is past the longest wait: the run parks long before it. */
export const approvalHandler: BlockHandler<ApprovalInput> = {
  timeoutMs: () => (APPROVAL_LIMITS.maxTimeoutMinutes + 1) * 60_000,
  async execute(run) {
    const request = approvalRequest(run.input);
    const outcome = await run.awaitApproval(request);
    if (outcome.decision === "failed") {
      throw new WorkflowError("BLOCK_TIMEOUT", `nobody decided within ${request.timeoutMinutes} minutes, and the block's default outcome is fail`);
    }
    return { ...outcome };
  },
};
