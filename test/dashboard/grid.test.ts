/**
 * The data grid in headless Chromium at 1400 × 900: the table pages of public.proposals and
 * public.workflows (UUIDs, long notes, whole workflow states as JSON) show 25 rows within one
 * screen's height with no cell taller than three lines, scroll sideways inside the grid and never
 * the page, sort by any column, and open a row's full value as formatted JSON.
 */
import { randomUUID } from "node:crypto";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WorkflowBuilder } from "../../supabase/functions/_shared/workflows/state/state-builder.ts";
import { sql } from "../workflows/execute-api.ts";
import { createWorkspace } from "../workflows/factories.ts";
import { launchBrowser, screenshot, studioUrl } from "./browser.ts";

const marker = `grid-${randomUUID().slice(0, 8)}`;
let browser: Browser;

/** A state as big as real ones: many blocks with code, so its JSON is thousands of characters. */
function bigState() {
  let builder = new WorkflowBuilder().block("start", "api_trigger", { inputFormat: [{ name: "customer", type: "string" }] }, { name: "API" });
  for (let index = 0; index < 12; index++) {
    builder = builder.block(`step${index}`, "function", { code: `const value = <api.customer>; return value + ' ${"x".repeat(60)} ${index}';` }, { name: `Step ${index}` });
    builder = builder.chain(index === 0 ? "start" : `step${index - 1}`, `step${index}`);
  }
  return builder.build();
}

beforeAll(async () => {
  const workspace = await createWorkspace(`Grid ${marker}`);
  const state = bigState();
  await sql`insert into public.workflows (workspace_id, name, description, state)
    select ${workspace.id}, ${marker} || '-' || n, repeat('A long description that would wrap many times. ', 8), ${sql.json(state as never)}
    from generate_series(1, 25) as n`;
  await sql`insert into public.proposals (customer_id, technician_id, product_id, monthly_value, contract_months, total_value, notes, approval_token_expires_at)
    select customer_id, technician_id, product_id, monthly_value, contract_months, total_value, ${marker} || ' ' || repeat('A long note about the customer''s needs. ', 12), now() + interval '7 days'
    from public.proposals, generate_series(1, 25) where status = 'pending' order by created_at limit 25`;
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await sql`delete from public.proposals where notes like ${`${marker}%`}`;
  await sql`delete from public.workflows where name like ${`${marker}-%`}`;
});

/** The page's own height, the grid's scroll widths and the tallest body cell in lines. */
async function measure(page: Page) {
  return await page.evaluate(() => {
    const cells = [...document.querySelectorAll<HTMLTableCellElement>("table.data-grid tbody td")];
    const lines = cells.map((cell) => cell.getBoundingClientRect().height / Number.parseFloat(getComputedStyle(cell).lineHeight));
    const grid = document.querySelector<HTMLElement>(".grid-wrap");
    return {
      documentHeight: document.documentElement.scrollHeight,
      documentWidth: document.documentElement.scrollWidth,
      rows: document.querySelectorAll("table.data-grid tbody tr").length,
      maxLines: Math.max(...lines),
      gridScrolls: grid ? grid.scrollWidth > grid.clientWidth : false,
    };
  });
}

describe("the data grid at 1400 × 900", () => {
  for (const table of ["proposals", "workflows"]) {
    it(`shows 25 rows of public.${table} within one screen, no cell taller than three lines, scrolling inside the grid`, async () => {
      const context = await browser.newContext({ locale: "en-GB", viewport: { width: 1400, height: 900 } });
      const page = await context.newPage();
      expect((await page.goto(`${studioUrl}/tables/public/${table}`))?.status()).toBe(200);
      const figures = await measure(page);
      await screenshot(page, `grid-${table}`);
      expect(figures.rows).toBe(25);
      expect(figures.documentHeight).toBeLessThanOrEqual(900);
      expect(figures.documentWidth).toBeLessThanOrEqual(1400);
      expect(figures.maxLines).toBeLessThanOrEqual(3);
      expect(figures.gridScrolls).toBe(true);
      await context.close();
    }, 120_000);
  }

  it("sorts by any column both ways, keeping the filter, and opens a row's full state as formatted JSON", async () => {
    const context = await browser.newContext({ locale: "en-GB", viewport: { width: 1400, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${studioUrl}/tables/public/workflows?column=name&op=ilike&value=${marker}`);
    const names = () => page.locator("table.data-grid").evaluate((grid) => {
      const at = [...grid.querySelectorAll("thead th")].findIndex((header) => (header as HTMLElement).innerText.startsWith("name"));
      return [...grid.querySelectorAll("tbody tr")].map((row) => (row.querySelectorAll("td")[at] as HTMLElement).innerText);
    });
    const nameHeader = page.getByRole("columnheader", { name: /^name/ });
    await Promise.all([page.waitForURL(/sort=name&dir=asc/), nameHeader.getByRole("link").click()]);
    expect(await nameHeader.getAttribute("aria-sort")).toBe("ascending");
    const ascending = await names();
    expect(ascending.length).toBe(25);
    expect(ascending.every((name) => name.startsWith(marker))).toBe(true);
    expect(ascending).toEqual([...ascending].sort());
    await Promise.all([page.waitForURL(/sort=name&dir=desc/), page.getByRole("columnheader", { name: /^name/ }).getByRole("link").click()]);
    expect(await names()).toEqual([...ascending].reverse());
    expect(await page.locator(".total").innerText()).toContain("25 rows match");

    await Promise.all([page.waitForURL(/\/edit\?key=/), page.locator("table.data-grid tbody tr").first().getByRole("link", { name: "Edit" }).click()]);
    const full = page.getByRole("region", { name: "Full values" }).locator("pre.json");
    const states = await full.allInnerTexts();
    const state = states.find((text) => text.includes("\"blocks\""));
    expect(state).toBeDefined();
    expect(state).toContain("\n  \"blocks\": {");
    expect(JSON.parse(state ?? "")).toEqual(expect.objectContaining({ blocks: expect.objectContaining({ step11: expect.anything() }) }));
    await screenshot(page, "grid-full-values");
    await context.close();
  }, 120_000);
});
