import { readEnv } from "../config/env.ts";

/** The workflow service's sender when WORKFLOW_EMAIL_FROM is unset (use a domain verified in Resend in production). */
export const DEFAULT_WORKFLOW_EMAIL_FROM = "Orbita Workflows <workflows@orbita.local>";

/** Who the workflow service's e-mails (approval requests, alerts) come from: WORKFLOW_EMAIL_FROM, read here only. */
export function workflowEmailSender(): string {
  return readEnv("WORKFLOW_EMAIL_FROM") || DEFAULT_WORKFLOW_EMAIL_FROM;
}
