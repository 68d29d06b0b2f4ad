/**
 * The dashboard's Auth page in headless Chromium against the running stack: a user created,
 * searched, confirmed, banned and let back in, given a new password, granted and revoked a portal
 * role, and deleted, each checked against what the auth service and the database then hold; and
 * the refusals (a short password, a taken address, a role held twice) shown in words.
 */
import type { Browser, Page } from "playwright-core";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deviceClient, freshEmail } from "../helpers/auth.ts";
import { env } from "../helpers/env.ts";
import { launchBrowser, openPage, screenshot, submit } from "./browser.ts";

const sql = postgres(env.dbUrl, { max: 2, onnotice: () => {} });
let browser: Browser;

/** Whether a password sign-in succeeds, from a device of its own. */
async function canSignIn(email: string, password: string): Promise<boolean> {
  const { data, error } = await deviceClient().auth.signInWithPassword({ email, password });
  return error === null && data.session !== null;
}

/** Fills the user list's "Create a user" form (not yet submitted). */
async function fillCreate(page: Page, email: string, password: string, confirm = true): Promise<void> {
  await page.getByText("Create a user", { exact: true }).click();
  const form = page.getByRole("form", { name: "Create a user" });
  await form.getByLabel("E-mail", { exact: true }).fill(email);
  await form.getByLabel("Password").fill(password);
  await form.getByLabel("Confirm the e-mail address now").setChecked(confirm);
}

/** Opens the user page of `email` from the user list's search. */
async function openUser(page: Page, email: string): Promise<void> {
  const search = page.getByRole("search", { name: "Search users" });
  await search.getByLabel("E-mail, phone or id").fill(email);
  await submit(page, "Search", search);
  expect(await page.locator(".total").innerText()).toMatch(/^1 user ·/);
  await Promise.all([page.waitForURL(/\/auth\/users\//), page.getByRole("link", { name: email }).click()]);
}

beforeAll(async () => {
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await sql.end();
});

describe("the Auth page in Chromium", () => {
  it("creates, finds, confirms, bans and lets back in, resets the password of, and deletes a user", async () => {
    const email = freshEmail("dashboard");
    const page = await openPage(browser, "/auth");

    // A short password is refused before anything is written.
    await fillCreate(page, email, "abc", false);
    await page.getByRole("form", { name: "Create a user" }).evaluate((form) => form.setAttribute("novalidate", ""));
    await submit(page, "Create user");
    expect(await page.getByRole("alert").innerText()).toBe("The password must have at least 6 characters");
    expect((await sql`select 1 from auth.users where email = ${email}`).length).toBe(0);

    await fillCreate(page, email, "first password 1", false);
    await submit(page, "Create user");
    expect(await page.getByRole("status").innerText()).toBe(`Created the user ${email}`);
    const [user] = await sql<{ id: string; email_confirmed_at: Date | null }[]>`select id, email_confirmed_at from auth.users where email = ${email}`;
    expect(user.email_confirmed_at).toBeNull();

    // The same address again: the auth service's refusal, in words.
    await fillCreate(page, email, "another password");
    await submit(page, "Create user");
    expect(await page.getByRole("alert").innerText()).toMatch(/already been registered/);

    await openUser(page, email);
    await screenshot(page, "auth-user");
    await submit(page, "Confirm e-mail");
    expect(await page.getByRole("status").innerText()).toBe("Confirmed the e-mail address");
    expect((await sql`select email_confirmed_at from auth.users where id = ${user.id}`)[0].email_confirmed_at).not.toBeNull();
    expect(await canSignIn(email, "first password 1")).toBe(true);

    await submit(page, "Ban");
    expect(await page.getByRole("status").innerText()).toBe("Banned the user");
    expect(await canSignIn(email, "first password 1")).toBe(false);
    await submit(page, "Lift the ban");
    expect(await page.getByRole("status").innerText()).toBe("Lifted the ban");
    expect(await canSignIn(email, "first password 1")).toBe(true);

    const reset = page.getByRole("form", { name: "Reset the password" });
    await reset.getByLabel("New password").fill("second password 2");
    await submit(page, "Set password", reset);
    expect(await page.getByRole("status").innerText()).toBe("Set the new password");
    expect(await canSignIn(email, "first password 1")).toBe(false);
    expect(await canSignIn(email, "second password 2")).toBe(true);

    // Portal roles: granted, refused twice (23505), revoked.
    const grant = page.getByRole("form", { name: "Grant a role" });
    await grant.getByLabel("Role").selectOption("technician");
    await submit(page, "Grant role", grant);
    expect(await page.getByRole("status").innerText()).toBe("Granted technician");
    expect(await sql`select role from public.user_roles where user_id = ${user.id}`).toEqual([{ role: "technician" }]);
    await grant.getByLabel("Role").selectOption("technician");
    await submit(page, "Grant role", grant);
    expect(await page.getByRole("alert").innerText()).toContain("A row with this value already exists (unique constraint)");
    expect((await sql`select 1 from public.user_roles where user_id = ${user.id}`).length).toBe(1);
    await screenshot(page, "auth-roles");
    await submit(page, "Revoke technician");
    expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe("Revoke technician?");
    expect((await sql`select 1 from public.user_roles where user_id = ${user.id}`).length).toBe(1);
    await submit(page, "Revoke technician for good");
    expect(await page.getByRole("status").innerText()).toBe("Revoked technician");
    expect((await sql`select 1 from public.user_roles where user_id = ${user.id}`).length).toBe(0);

    await submit(page, "Delete user");
    expect(await page.getByRole("region", { name: "What will be lost" }).innerText()).toContain(email);
    expect((await sql`select 1 from auth.users where id = ${user.id}`).length).toBe(1);
    await submit(page, "Delete the user");
    expect(page.url()).toMatch(/\/auth\?notice=/);
    expect(await page.getByRole("status").innerText()).toBe("Deleted the user");
    expect((await sql`select 1 from auth.users where id = ${user.id}`).length).toBe(0);
    await page.context().close();
  }, 120_000);

  it("shows a technician's gamification row beside the account", async () => {
    const [technician] = await sql<{ id: string; nome: string; email: string }[]>`
      select t.id, t.nome, u.email from public.tecnicos t join auth.users u on u.id = t.id order by t.criado_em limit 1`;
    const page = await openPage(browser, `/auth/users/${technician.id}`);
    expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe(technician.email);
    expect(await page.locator("table.technician").innerText()).toContain(technician.nome);
    await page.context().close();
  }, 120_000);
});
