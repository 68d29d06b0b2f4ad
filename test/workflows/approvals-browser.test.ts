/**
 * An approval as people meet it, in headless Chromium (Debian's /usr/bin/chromium): the dashboard
 * lists the waiting approval (workflow, run, block, since, expires); the approver opens the e-mailed
 * link, is refused with someone else's address, answers with their own (a required text field and a
 * checkbox), and the run goes on; the link then says it was used.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WorkflowBuilder } from "../../supabase/functions/_shared/workflows/state/state-builder.ts";
import { launchBrowser, openPage, screenshot } from "../dashboard/browser.ts";
import { latestMail } from "../helpers/auth.ts";
import { runState } from "./durable-helpers.ts";
import { apiKey, deployedWorkflow, eventually, execute, record, setPlan, sql } from "./execute-api.ts";
import { createWorkspace, type TestWorkspace } from "./factories.ts";

let browser: Browser;
let workspace: TestWorkspace;
const approver = `dana-${crypto.randomUUID().slice(0, 8)}@approvals.test`;

beforeAll(async () => {
  workspace = await createWorkspace("Approval pages");
  await setPlan(workspace.id, "enterprise", { sync_per_minute: 1000, async_per_minute: 1000 });
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await sql.end();
});

/** Opens a link in a fresh browser context (no dashboard notice expected). */
async function openLink(link: string): Promise<{ page: Page; status: number | undefined }> {
  const page = await (await browser.newContext({ locale: "en-GB" })).newPage();
  page.setDefaultTimeout(30_000);
  const response = await page.goto(link);
  return { page, status: response?.status() };
}

describe("an approval in the browser", () => {
  it("is listed while it waits, answered on its page by the approver alone, and its link used once", async () => {
    const workflowId = await deployedWorkflow(workspace.members.editor, workspace.id, "Release train", new WorkflowBuilder()
      .block("api", "api_trigger", { inputFormat: [{ name: "version", type: "string" }] }, { name: "API" })
      .block("gate", "approval", {
        approvers: [approver, "someone@approvals.test"], quorum: 1, timeoutMinutes: 120, message: "Release <api.version> to production?",
        fields: [{ name: "ticket", label: "Change ticket", type: "text", required: true }, { name: "tested", label: "Tested on staging", type: "boolean" }],
      }, { name: "Release Gate" })
      .block("done", "response", { body: { decision: "<releasegate.decision>", approvals: "<releasegate.approvals>" } }, { name: "Done" })
      .chain("api", "gate", "done").build());
    const key = (await apiKey(workspace.members.editor)).key;
    const started = await execute(workflowId, key, { version: "4.2" }, { "X-Execution-Mode": "async" });
    const executionId = started.body.executionId as string;
    await eventually("the run to park", () => runState(sql, executionId), (state) => state.parkedUntil !== null, 40_000);

    const dashboard = await openPage(browser, "/workflows");
    const row = dashboard.locator("table.approvals tr", { hasText: executionId });
    expect(await row.innerText()).toMatch(/Release train\s+\S+\s+Release Gate\s+0 of 1 \(2 asked\)/);
    await screenshot(dashboard, "waiting-approvals");

    const link = (await latestMail(approver)).link;
    const { page, status } = await openLink(link);
    expect(status).toBe(200);
    expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe("Approval requested: Release Gate");
    expect(await page.locator(".message").innerText()).toBe("Release 4.2 to production?");

    await page.getByLabel("Your e-mail address").fill("someone@approvals.test");
    await page.getByLabel("Change ticket (required)").fill("CHG-7");
    await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: "Approve" }).click()]);
    expect(await page.getByRole("alert").innerText()).toBe("That is not the e-mail address this link was sent to.");
    expect(await page.getByLabel("Change ticket (required)").inputValue()).toBe("CHG-7");

    await page.getByLabel("Your e-mail address").fill(approver);
    await page.getByLabel("Tested on staging").check();
    await page.getByLabel("Comment (optional)").fill("Staging is green");
    await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: "Approve" }).click()]);
    expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe("You approved");
    expect(await page.getByRole("status").innerText()).toContain("This decided the approval: approved");

    const run = await eventually("the run to finish", () => record(executionId), (ended) => ended.status !== "running", 40_000);
    expect(run.output).toMatchObject({ data: { decision: "approved", approvals: [{ email: approver, comment: "Staging is green", fields: { ticket: "CHG-7", tested: true } }] } });

    const again = await openLink(link);
    expect(again.status).toBe(409);
    expect(await again.page.getByRole("heading", { level: 1 }).innerText()).toBe("Link already used");
    expect(await (await openPage(browser, "/workflows")).locator("table.approvals tr", { hasText: executionId }).count()).toBe(0);
  }, 120_000);
});
