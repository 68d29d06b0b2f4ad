import { describe, expect, it } from "vitest";
import { type ApprovalView, renderAnswered, renderApprovalForm, renderProblem, typedFieldValues } from "./approval-page.ts";

const view: ApprovalView = {
  state: "open", workflowName: "Deploys <prod>", blockName: "Sign off", message: "Ship <b>v2</b>?", quorum: 2, approvers: 3, expiresAt: "2026-12-01T12:00:00Z",
  fields: [{ name: "ticket", label: "Ticket", type: "text", required: true }, { name: "risk", label: "Risk", type: "number" }, { name: "tested", label: "Tested", type: "boolean" }],
};

describe("the workflow approval page", () => {
  it("escapes what the workflow wrote and posts back to its own link", () => {
    const page = renderApprovalForm(view, "tok en");
    expect(page.status).toBe(200);
    expect(page.html).toContain("Ship &lt;b&gt;v2&lt;/b&gt;?");
    expect(page.html).toContain("Deploys &lt;prod&gt;");
    expect(page.html).toContain('action="?token=tok%20en"');
    expect(page.html).toContain('name="field.ticket" type="text" maxlength="2000" required');
    expect(page.html).not.toContain("<script");
  });

  it("types the form's values: numbers parsed, a checkbox true only when ticked, blank text left out", () => {
    expect(typedFieldValues(view.fields, { "field.ticket": "T-1", "field.risk": "2.5", "field.tested": "true" })).toEqual({ ticket: "T-1", risk: 2.5, tested: true });
    expect(typedFieldValues(view.fields, { "field.ticket": " " })).toEqual({ tested: false });
    expect(typedFieldValues(view.fields, { "field.risk": "high" })).toBe("Risk must be a number");
  });

  it("says why a link cannot answer, with the status that says the same", () => {
    expect([renderProblem("used").status, renderProblem("expired").status, renderProblem("unknown_token").status, renderProblem("closed").status]).toEqual([409, 410, 404, 409]);
    expect(renderProblem("used").html).toContain("Link already used");
    expect(renderAnswered("approve", "approved").html).toContain("This decided the approval: approved");
  });
});
