/**
 * The SQL editor in headless Chromium against the running stack: a statement runs as the service
 * role through pg-meta's query endpoint, its rows land in the tables' grid, a write is stored,
 * Postgres' refusal comes back with its code and position in the person's text, and the recent
 * statements can be run again.
 */
import { randomUUID } from "node:crypto";
import type { Browser } from "playwright-core";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { env } from "../helpers/env.ts";
import { launchBrowser, openPage, screenshot, submit } from "./browser.ts";

const sql = postgres(env.dbUrl, { max: 1, onnotice: () => {} });
const suffix = randomUUID().slice(0, 8);
let browser: Browser;

beforeAll(async () => {
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await sql`delete from public.cidades where id = ${`sql-${suffix}`}`;
  await sql.end();
});

describe("the SQL editor in Chromium", () => {
  it("runs statements as the service role, shows rows in the grid, errors with code and position, and keeps a history", async () => {
    const page = await openPage(browser, "/sql");
    const editor = page.getByRole("form", { name: "SQL editor" });

    await editor.getByLabel(/^Statement/).fill("select current_user as role, slug, nome from public.niveis order by ordem");
    await submit(page, "Run", editor);
    const levels = await sql<{ slug: string }[]>`select slug from public.niveis order by ordem`;
    expect(await page.getByRole("status").innerText()).toBe(`${levels.length} rows`);
    const grid = page.getByRole("region", { name: "Query results" });
    expect(await grid.getByRole("columnheader").allInnerTexts()).toEqual(["role", "slug", "nome"]);
    expect(await grid.locator("tbody tr td:nth-child(1)").allInnerTexts()).toEqual(levels.map(() => "service_role"));
    expect(await grid.locator("tbody tr td:nth-child(2)").allInnerTexts()).toEqual(levels.map((level) => level.slug));
    await screenshot(page, "sql-rows");

    // A write, stored, and its returning rows shown.
    await editor.getByLabel(/^Statement/).fill(`insert into public.cidades (id, nome, uf) values ('sql-${suffix}', 'SQL City ${suffix}', 'MG') returning id, raio_checkin_m`);
    await submit(page, "Run", editor);
    expect(await page.getByRole("status").innerText()).toBe("1 row");
    expect(await sql`select nome, uf from public.cidades where id = ${`sql-${suffix}`}`).toEqual([{ nome: `SQL City ${suffix}`, uf: "MG" }]);

    // Postgres' refusal: its code and where, in the person's own text (line 2, column 9).
    await editor.getByLabel(/^Statement/).fill("select 1,\n  2 frm public.niveis");
    await submit(page, "Run", editor);
    const alert = await page.getByRole("alert").innerText();
    expect(alert).toContain("ERROR 42601 at character 19 (line 2, column 9)");
    expect(alert).toContain("syntax error at or near \"public\"");
    await screenshot(page, "sql-error");

    // Service role, not superuser: a table it has no grant on is refused.
    await editor.getByLabel(/^Statement/).fill("select * from auth.schema_migrations");
    await submit(page, "Run", editor);
    expect(await page.getByRole("alert").innerText()).toContain("ERROR 42501");

    // The history, newest first, and a statement from it run again.
    const history = page.getByRole("region", { name: "Recent statements" }).getByRole("listitem");
    expect(await history.count()).toBeGreaterThanOrEqual(4);
    expect(await history.nth(3).innerText()).toContain("select current_user as role");
    await submit(page, "Run again", history.nth(3));
    expect(await page.getByRole("status").innerText()).toBe(`${levels.length} rows`);
    await page.context().close();
  }, 120_000);

  it("answers an empty statement with the documented refusal, not a failure", async () => {
    const response = await fetch(`${process.env.STUDIO_URL}/sql`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "statement=%20%20" });
    expect(response.status).toBe(400);
    expect(await response.text()).toContain("Write a statement to run");
  });
});
