/**
 * A workflow's schedules in the dashboard, in headless Chromium against the running stack: the
 * next occurrences (as preview_schedule computes them) and a paused schedule resumed
 * (resume_workflow_schedule), with the stored row checked afterwards.
 */
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WorkflowBuilder } from "../../supabase/functions/_shared/workflows/state/state-builder.ts";
import { deployedWorkflow, sql } from "../workflows/execute-api.ts";
import { createWorkspace } from "../workflows/factories.ts";
import { launchBrowser, openPage, screenshot, studioUrl, submit } from "./browser.ts";

let browser: Browser;
let workflowId: string;

beforeAll(async () => {
  const workspace = await createWorkspace("Dashboard schedules");
  const state = new WorkflowBuilder().block("tick", "schedule", { cronExpression: "0 6 * * 1" }, { name: "Mondays" }).block("work", "function", { code: "return 1;" }, { name: "Work" }).chain("tick", "work").build();
  workflowId = await deployedWorkflow(workspace.members.editor, workspace.id, "Weekly", state);
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await sql.end();
});

describe("schedules in Chromium", () => {
  it("lists the next occurrences and resumes a paused schedule", async () => {
    const [schedule] = await sql<{ id: string }[]>`select id from public.workflow_schedules where workflow_id = ${workflowId}`;
    // Paused as the ticker leaves a schedule after its failures in a row (the API has no manual pause).
    await sql`update public.workflow_schedules set status = 'paused', paused_reason = 'Paused after 3 consecutive failed runs', paused_at = now(), next_run_at = null, consecutive_failures = 3 where id = ${schedule.id}`;
    const preview = async () => (await sql<{ runs: Date[] }[]>`select public.preview_schedule('0 6 * * 1', 'UTC', 5) as runs`)[0].runs
      .map((at) => new Date(at).toISOString());
    // Read on both sides of the page load: a Monday 06:00 UTC passing in between moves the list by one.
    const previewBefore = await preview();
    const page = await openPage(browser, `/workflows/${workflowId}`);
    const row = page.locator(`tr[data-schedule-id='${schedule.id}']`);
    const shown = (await row.locator("ol.occurrences li").allInnerTexts()).map((at) => new Date(at).toISOString());
    expect(shown).toHaveLength(5);
    expect(shown.every((at) => new Date(at).getUTCDay() === 1 && new Date(at).getUTCHours() === 6)).toBe(true);
    const previewAfter = await preview();
    expect([previewBefore, previewAfter]).toContainEqual(shown);
    expect(await row.innerText()).toContain("Paused after 3 consecutive failed runs");
    await screenshot(page, "workflows-schedules");

    await submit(page, "Resume", row);
    expect(await page.getByRole("status").innerText()).toBe("Resumed the schedule Mondays");
    const [after] = await sql<{ status: string; next_run_at: Date | null; consecutive_failures: number }[]>`select status::text, next_run_at, consecutive_failures from public.workflow_schedules where id = ${schedule.id}`;
    expect(after.status).toBe("active");
    expect(after.consecutive_failures).toBe(0);
    expect(shown.slice(0, 2)).toContain(after.next_run_at?.toISOString());
    expect(await page.locator(`tr[data-schedule-id='${schedule.id}']`).getByRole("button", { name: "Resume" }).count()).toBe(0);
    await page.context().close();
  }, 120_000);

  it("answers an unknown schedule with 404", async () => {
    const answer = await fetch(`${studioUrl}/workflows/schedules/00000000-0000-4000-8000-000000000000/resume`, { method: "POST", redirect: "manual", headers: { origin: studioUrl } });
    expect(answer.status).toBe(404);
  });
});
