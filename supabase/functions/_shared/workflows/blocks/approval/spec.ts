/** The `approval` block type: waits for people to approve or reject (Sim's Human in the Loop). */
import { defineBlock } from "../block-spec.ts";
import { APPROVER_ROLES, approvalConfigSchema } from "./config.ts";

const roles = [...APPROVER_ROLES];

/** Approval. */
export const approvalSpec = defineBlock({
  type: "approval",
  category: "core",
  summary: "Waits until people approve or reject (a quorum of e-mail addresses or of a workspace role), or its timeout decides; async runs only.",
  configSchema: approvalConfigSchema,
  rules: [
    { rule: "requires", where: { field: "approverRole", notIn: roles }, field: "approvers", message: "an approval needs approvers (e-mail addresses) or approverRole" },
    { rule: "forbids", where: { field: "approverRole", in: roles }, field: "approvers", message: "give approvers or approverRole, not both" },
    { rule: "unique", list: "fields", field: "name", message: "field \"{name}\" is asked twice" },
  ],
});
