/**
 * The dashboard's Tables page in headless Chromium against the running stack: the tables of the
 * exposed schemas with their row counts, a table's rows filtered and paged with its RLS policies
 * beside them, and a row inserted, edited and deleted as the service role, with the server's
 * refusals (a unique violation, a check constraint, a malformed value) shown in words and nothing
 * written.
 */
import { randomUUID } from "node:crypto";
import type { Browser } from "playwright-core";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestUser } from "../helpers/clients.ts";
import { env } from "../helpers/env.ts";
import { launchBrowser, openPage, screenshot, submit } from "./browser.ts";

const sql = postgres(env.dbUrl, { max: 2, onnotice: () => {} });
const suffix = randomUUID().slice(0, 8);
const cityId = `dashboard-${suffix}`;
let browser: Browser;

beforeAll(async () => {
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await sql`delete from public.cidades where id like ${`%${suffix}%`}`;
  await sql.end();
});

describe("the Tables page in Chromium", () => {
  it("lists every exposed schema's tables with their exact row counts and RLS", async () => {
    // The levels catalogue: no other test writes it while this one reads.
    const [{ count }] = await sql<{ count: number }[]>`select count(*)::int as count from public.niveis`;
    const page = await openPage(browser, "/tables");
    expect(await page.getByRole("heading", { level: 2 }).allInnerTexts()).toEqual(["Schema public", "Schema graphql_public"]);
    const row = page.getByRole("row").filter({ has: page.getByRole("link", { name: "niveis", exact: true }) });
    expect((await row.locator("td").allInnerTexts()).slice(0, 3)).toEqual(["niveis", String(count), "on"]);
    await screenshot(page, "tables-list");
    await page.getByRole("link", { name: "user_roles", exact: true }).click();
    await page.waitForURL(/\/tables\/public\/user_roles$/);
    await page.getByRole("complementary").getByText(/^Policies \(\d+\)$/).click();
    expect(await page.getByRole("complementary").innerText()).toContain("Users can read their own roles");
    await page.context().close();
  }, 120_000);

  it("inserts, filters, edits and deletes a row, showing each refusal in words and writing nothing for it", async () => {
    const page = await openPage(browser, "/tables/public/cidades");
    expect(await page.getByRole("complementary").getByRole("heading").innerText()).toMatch(/^Policies \(\d+\)$/);

    // Insert.
    await page.getByText("Insert a row").click();
    await page.getByLabel(/^id/).fill(cityId);
    await page.getByLabel(/^nome/).fill(`Dashboard City ${suffix}`);
    await page.getByLabel(/^uf/).fill("SP");
    await submit(page, "Insert row");
    expect(await page.getByRole("status").innerText()).toBe("Inserted a row into public.cidades");
    expect(await sql`select id, nome, uf, raio_checkin_m from public.cidades where id = ${cityId}`).toEqual([{ id: cityId, nome: `Dashboard City ${suffix}`, uf: "SP", raio_checkin_m: 300 }]);

    // The same id again: a unique violation, in words.
    await page.getByText("Insert a row").click();
    await page.getByLabel(/^id/).fill(cityId);
    await page.getByLabel(/^nome/).fill(`Another name ${suffix}`);
    await page.getByLabel(/^uf/).fill("RJ");
    await submit(page, "Insert row");
    expect(await page.getByRole("alert").innerText()).toContain("A row with this value already exists (unique constraint)");
    expect((await sql`select 1 from public.cidades where nome = ${`Another name ${suffix}`}`).length).toBe(0);

    // Filter down to the new row.
    const search = page.getByRole("search", { name: "Filter rows" });
    await search.getByLabel("Column").selectOption("id");
    await search.getByLabel("Operator").selectOption("ilike");
    await search.getByLabel("Value").fill(suffix);
    await submit(page, "Filter");
    expect(await page.locator(".total").innerText()).toContain("1 row match");
    const rows = page.locator("table.rows tbody tr");
    expect(await rows.count()).toBe(1);
    expect(await rows.first().locator("td").first().innerText()).toBe(cityId);
    await screenshot(page, "tables-filtered");

    // Edit: a value the check constraint refuses, then a good one.
    await Promise.all([page.waitForURL(/\/edit\?key=/), rows.first().getByRole("link", { name: "Edit" }).click()]);
    await page.getByLabel(/^raio_checkin_m/).fill("9999");
    await submit(page, "Save row");
    expect(await page.getByRole("alert").innerText()).toContain("A check constraint refused the value");
    expect((await sql`select raio_checkin_m from public.cidades where id = ${cityId}`)[0].raio_checkin_m).toBe(300);
    await page.getByLabel(/^raio_checkin_m/).fill("not a number");
    await submit(page, "Save row");
    expect(await page.getByRole("alert").innerText()).toContain("A value has the wrong format for its column");
    await page.getByLabel(/^raio_checkin_m/).fill("450");
    await page.getByLabel(/^nome/).fill("");
    await submit(page, "Save row");
    expect(await page.getByRole("alert").innerText()).toBe("nome cannot be empty (it is NOT NULL)");
    await page.getByLabel(/^nome/).fill(`Dashboard City ${suffix}`);
    await page.getByLabel(/^raio_checkin_m/).fill("450");
    await submit(page, "Save row");
    expect(await page.getByRole("status").innerText()).toBe("Saved the row of public.cidades");
    expect((await sql`select raio_checkin_m from public.cidades where id = ${cityId}`)[0].raio_checkin_m).toBe(450);
    await screenshot(page, "tables-edited");

    // Delete: first a page naming the row that will be lost, where keeping it deletes nothing.
    await page.goto(`${new URL(page.url()).origin}/tables/public/cidades?column=id&op=eq&value=${cityId}`);
    await submit(page, "Delete", page.locator("table.rows tbody tr").first());
    expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe("Delete this row of public.cidades?");
    const lost = await page.getByRole("region", { name: "What will be lost" }).innerText();
    expect(lost).toContain(cityId);
    expect(lost).toContain(`Dashboard City ${suffix}`);
    await screenshot(page, "tables-confirm-delete");
    await Promise.all([page.waitForURL(/\/tables\/public\/cidades$/), page.getByRole("link", { name: "Keep it" }).click()]);
    expect((await sql`select 1 from public.cidades where id = ${cityId}`).length).toBe(1);
    await page.goto(`${new URL(page.url()).origin}/tables/public/cidades?column=id&op=eq&value=${cityId}`);
    await submit(page, "Delete", page.locator("table.rows tbody tr").first());
    await submit(page, "Delete row");
    expect(await page.getByRole("status").innerText()).toBe("Deleted a row of public.cidades");
    expect((await sql`select 1 from public.cidades where id = ${cityId}`).length).toBe(0);
    await page.context().close();
  }, 120_000);

  it("edits a row whose key Postgres generates (identity ALWAYS), leaving the key to Postgres", async () => {
    const user = await createTestUser();
    const [{ id }] = await sql<{ id: number }[]>`insert into public.user_roles (user_id, role) values (${user.id}, 'technician') returning id`;
    const page = await openPage(browser, `/tables/public/user_roles?column=user_id&op=eq&value=${user.id}`);
    await Promise.all([page.waitForURL(/\/edit\?key=/), page.locator("table.rows tbody tr").first().getByRole("link", { name: "Edit" }).click()]);
    expect(await page.getByLabel(/^id/).isDisabled()).toBe(true);
    await page.getByLabel(/^role/).fill("admin");
    await submit(page, "Save row");
    expect(await page.getByRole("status").innerText()).toBe("Saved the row of public.user_roles");
    expect(await sql`select id, role::text from public.user_roles where user_id = ${user.id}`).toEqual([{ id, role: "admin" }]);
    // A value outside the enum is Postgres's refusal, in words.
    await page.getByLabel(/^role/).fill("emperor");
    await submit(page, "Save row");
    expect(await page.getByRole("alert").innerText()).toContain("invalid input value for enum app_role");
    await sql`delete from public.user_roles where user_id = ${user.id}`;
    await page.context().close();
  }, 120_000);

  it("pages through a table's rows", async () => {
    const [{ count }] = await sql<{ count: number }[]>`select count(*)::int as count from public.historico_pontos`;
    expect(count).toBeGreaterThan(25);
    const page = await openPage(browser, "/tables/public/historico_pontos");
    const total = Number(/^(\d+) rows?/.exec(await page.locator(".total").innerText())?.[1]);
    expect(total).toBeGreaterThanOrEqual(count);
    expect(await page.locator("table.rows tbody tr").count()).toBe(25);
    await Promise.all([page.waitForURL(/page=2/), page.getByRole("link", { name: "Next" }).click()]);
    expect(await page.locator(".total").innerText()).toContain("page 2 of");
    await page.context().close();
  }, 120_000);
});
