/**
 * What an approval block asks for and what it gets back (blocks/approval/, docs/workflow-blocks.md
 * "Approval"): the engine hands the request to the run's ApprovalDesk, which the async worker
 * provides (runs/approval-desk.ts) and which keeps the approval in the database, where people's
 * answers, the resume API and the timeout decide it.
 */

/** A typed form field the approvers fill in. */
export interface ApprovalField {
  name: string;
  label: string;
  type: "text" | "number" | "boolean";
  required?: boolean;
}

/** An approval block's resolved request. */
export interface ApprovalRequest {
  /** E-mail addresses; or `approverRole`, the workspace members with that role or above. */
  approvers?: string[];
  approverRole?: "owner" | "admin" | "editor" | "viewer";
  quorum: number;
  message: string;
  fields: ApprovalField[];
  timeoutMinutes: number;
  defaultOutcome: "approve" | "reject" | "fail";
  reminderMinutesBefore: number[];
}

/** One answer, through an approver's link (`email`) or the resume API (`email` null). */
export interface ApprovalAnswer {
  email: string | null;
  via: "link" | "api";
  decision: "approve" | "reject";
  answeredAt: string;
  comment: string | null;
  fields: Record<string, unknown>;
}

/** The decision, as the block outputs it; `failed` is a timeout whose default outcome is fail. */
export interface ApprovalOutcome {
  decision: "approved" | "rejected" | "failed";
  decidedBy: "quorum" | "rejection" | "timeout" | "api";
  decidedAt: string;
  approvals: ApprovalAnswer[];
}

/** Where an approval is open: decided already, or waiting until `expiresAt` (ISO). */
export type ApprovalState = { decided: true; output: ApprovalOutcome } | { decided: false; expiresAt: string };

/** Keeps a run's approvals; `key` is the block instance (block id plus iteration path). */
export interface ApprovalDesk {
  /** Opens the instance's approval the first time, finds it afterwards (deciding it by its timeout once due). */
  open(key: string, block: { id: string; name: string }, request: ApprovalRequest): Promise<ApprovalState>;
}
