/**
 * Every dashboard page in headless Chromium, checked by axe-core (the pinned npm package, injected
 * into the page): no serious or critical violation. Also: the icon answers (no page logs a 404),
 * and the grid works by keyboard (reach a column's sort link by Tab, sort with Enter).
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "../workflows/execute-api.ts";
import { expectAccessible, launchBrowser, openPage, screenshot, studioUrl } from "./browser.ts";

let browser: Browser;
const paths: string[] = [];

beforeAll(async () => {
  browser = await launchBrowser();
  const [user] = await sql<{ id: string }[]>`select id from auth.users order by created_at limit 1`;
  const [technician] = await sql<{ id: string }[]>`select id from public.tecnicos order by pontos_total desc limit 1`;
  const [workflow] = await sql<{ id: string; workspace_id: string }[]>`select id, workspace_id from public.workflows order by created_at limit 1`;
  const [run] = await sql<{ id: string }[]>`select id from public.workflow_executions order by created_at desc limit 1`;
  const [bucket] = await sql<{ id: string }[]>`select id from storage.buckets order by id limit 1`;
  const [level] = await sql<{ slug: string }[]>`select slug from public.niveis order by ordem limit 1`;
  paths.push(
    "/tables", "/tables/public/proposals", "/tables/public/workflows?sort=name&dir=desc",
    `/tables/public/niveis/edit?key=${encodeURIComponent(JSON.stringify({ slug: level.slug }))}`,
    "/sql", "/auth", `/auth/users/${user.id}`, "/storage", "/mail", "/workflows", `/workflows/${workflow.id}`, `/workflows/${workflow.id}/state`, `/workflows/workspaces/${workflow.workspace_id}`,
    "/gamification", `/gamification/technicians/${technician.id}`,
  );
  if (bucket) paths.push(`/storage/${bucket.id}`);
  if (run) paths.push(`/workflows/runs/${run.id}`);
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

/** Every response the page asked for that failed (status 400 or more), by path. */
function failedRequests(page: Page): string[] {
  const failed: string[] = [];
  page.on("response", (response) => {
    if (response.status() >= 400) failed.push(`${response.status()} ${new URL(response.url()).pathname}`);
  });
  return failed;
}

describe("the dashboard's accessibility", () => {
  it("has no serious or critical axe-core violation on any page, and no failed request", async () => {
    for (const path of paths) {
      const page = await openPage(browser, path);
      const failed = failedRequests(page);
      await page.reload();
      await expectAccessible(page);
      expect(failed, path).toEqual([]);
      await page.context().close();
    }
  }, 600_000);

  it("has no serious or critical violation on confirmation pages, a SQL result, a SQL error and a draft's issues", async () => {
    const page = await openPage(browser, "/sql");
    await page.getByLabel(/^Statement/).fill("select slug, nome from public.niveis");
    await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: "Run", exact: true }).click()]);
    await expectAccessible(page);
    await page.getByLabel(/^Statement/).fill("select from nowhere_at_all");
    await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: "Run", exact: true }).click()]);
    await expectAccessible(page);
    await page.goto(`${studioUrl}/tables/public/niveis`);
    await Promise.all([page.waitForNavigation(), page.locator("table.data-grid tbody tr").first().getByRole("button", { name: "Delete" }).click()]);
    expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe("Delete this row of public.niveis?");
    await expectAccessible(page);
    // A workflow's delete confirmation (not confirmed: nothing is deleted) and the draft editor's issues.
    const [workflow] = await sql<{ id: string }[]>`select id from public.workflows order by created_at limit 1`;
    await page.goto(`${studioUrl}/workflows/${workflow.id}`);
    await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: "Delete workflow", exact: true }).click()]);
    expect(await page.getByRole("heading", { level: 1 }).innerText()).toMatch(/^Delete .+\?$/);
    await expectAccessible(page);
    await page.goto(`${studioUrl}/workflows/${workflow.id}/state`);
    await page.getByLabel("State (JSON)").fill('{"blocks": {}, "edges": [{"id": "e", "source": "a", "target": "b"}], "loops": {}, "parallels": {}}');
    await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: "Check", exact: true }).click()]);
    expect(await page.getByRole("region", { name: "Issues that stop saving" }).locator("li").count()).toBeGreaterThan(0);
    await expectAccessible(page);
    await page.context().close();
  }, 120_000);

  it("serves an icon at /favicon.ico", async () => {
    const response = await fetch(`${studioUrl}/favicon.ico`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("image/svg+xml");
    expect(await response.text()).toContain("<svg");
  });

  it("sorts the grid by keyboard alone", async () => {
    const page = await openPage(browser, "/tables/public/niveis");
    let focused = "";
    for (let presses = 0; presses < 40 && focused !== "ordem"; presses++) {
      await page.keyboard.press("Tab");
      focused = await page.evaluate(() => (document.activeElement?.closest("th") ? (document.activeElement as HTMLElement).innerText.trim() : ""));
    }
    expect(focused).toBe("ordem");
    await Promise.all([page.waitForURL(/sort=ordem&dir=asc/), page.keyboard.press("Enter")]);
    await page.keyboard.press("Tab");
    const [{ count }] = await sql<{ count: number }[]>`select count(*)::int as count from public.niveis`;
    expect(await page.locator("table.data-grid tbody tr").count()).toBe(Math.min(25, count));
    await screenshot(page, "keyboard-sorted");
    await page.context().close();
  }, 120_000);
});
