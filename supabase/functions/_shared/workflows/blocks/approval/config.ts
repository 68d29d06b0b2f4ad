/** Approval config: who approves, how many must, what they read and fill in, and until when. */
import { z } from "zod";
import { identifier } from "../config-parts.ts";

/** Limits of the approval block (docs/workflow-limits.md); open_workflow_approval enforces the same at run time. */
export const APPROVAL_LIMITS = {
  approvers: 20,
  fields: 10,
  messageChars: 10_000,
  fieldLabelChars: 200,
  minTimeoutMinutes: 1,
  /** 30 days: as long as an async run may park. */
  maxTimeoutMinutes: 30 * 24 * 60,
  defaultTimeoutMinutes: 24 * 60,
  reminders: 3,
} as const;

/** The workspace roles an approval may name (that role or above approves). */
export const APPROVER_ROLES = ["owner", "admin", "editor", "viewer"] as const;

const field = z
  .object({
    name: identifier,
    label: z.string().min(1).max(APPROVAL_LIMITS.fieldLabelChars),
    type: z.enum(["text", "number", "boolean"]),
    required: z.boolean().optional(),
  })
  .strict();

/** The config of an `approval` block. */
export const approvalConfigSchema = z
  .object({
    /** E-mail addresses (or references resolving to them). */
    approvers: z.array(z.string().min(1).max(254)).min(1).max(APPROVAL_LIMITS.approvers).optional(),
    approverRole: z.enum(APPROVER_ROLES).optional(),
    quorum: z.number().int().min(1).max(APPROVAL_LIMITS.approvers).optional(),
    /** What the approvers read; references such as `<agent.content>` are filled in. */
    message: z.string().min(1).max(APPROVAL_LIMITS.messageChars),
    fields: z.array(field).max(APPROVAL_LIMITS.fields).optional(),
    timeoutMinutes: z.number().int().min(APPROVAL_LIMITS.minTimeoutMinutes).max(APPROVAL_LIMITS.maxTimeoutMinutes).optional(),
    defaultOutcome: z.enum(["approve", "reject", "fail"]).optional(),
    reminderMinutesBefore: z.array(z.number().int().min(1).max(APPROVAL_LIMITS.maxTimeoutMinutes - 1)).max(APPROVAL_LIMITS.reminders).optional(),
  })
  .strict();
