import { afterEach, describe, expect, it, vi } from "vitest";
import { approvalEmail, approvalPageLink } from "./approval-mail.ts";

const mail = { messageId: 7, kind: "request" as const, workflowName: "Deploys", blockName: "Sign off", message: "Ship <v2>?", expiresAt: "2026-12-01T12:00:00Z", recipients: [] };

describe("approval e-mails", () => {
  afterEach(() => vi.unstubAllEnvs());

  it("link to the workflow-approval function, or WORKFLOW_APPROVAL_URL", () => {
    vi.stubEnv("SUPABASE_URL", "http://127.0.0.1:54321");
    vi.stubEnv("WORKFLOW_APPROVAL_URL", "");
    expect(approvalPageLink("abc")).toBe("http://127.0.0.1:54321/functions/v1/workflow-approval?token=abc");
    vi.stubEnv("WORKFLOW_APPROVAL_URL", "https://approve.example.com/");
    expect(approvalPageLink("abc")).toBe("https://approve.example.com/?token=abc");
  });

  it("hold the message, the link and the deadline; a reminder says its link replaces the earlier one", () => {
    const email = approvalEmail(mail, "a@x.test", "https://x.test/?token=t");
    expect(email).toMatchObject({ to: ["a@x.test"], subject: "Approval requested: Sign off (Deploys)", from: "Orbita Workflows <workflows@orbita.local>" });
    expect(email.html).toContain("Ship &lt;v2&gt;?");
    expect(email.text).toContain("https://x.test/?token=t");
    expect(approvalEmail({ ...mail, kind: "reminder" }, "a@x.test", "l").text).toContain("replaces the one sent earlier");
  });
});
