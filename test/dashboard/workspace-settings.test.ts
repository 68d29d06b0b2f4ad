/**
 * A workspace's API keys and environment variables in the dashboard, in headless Chromium against
 * the running stack: a new key shown once (its hash stored, never the key, and never shown again),
 * revoked behind a confirmation; variables set, replaced and deleted with their value never shown
 * back, the stored (decrypted) value checked after each step.
 */
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "../workflows/execute-api.ts";
import { createWorkspace, type TestWorkspace } from "../workflows/factories.ts";
import { launchBrowser, openPage, screenshot, studioUrl, submit } from "./browser.ts";

let browser: Browser;
let workspace: TestWorkspace;

async function environment(): Promise<Record<string, string>> {
  const [{ env }] = await sql<{ env: Record<string, string> }[]>`select public.workspace_environment(${workspace.id}) as env`;
  return env;
}

beforeAll(async () => {
  workspace = await createWorkspace("Dashboard settings");
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await sql.end();
});

describe("a workspace's keys and variables in Chromium", () => {
  it("shows a new API key once, then revokes it after a confirmation", async () => {
    const page = await openPage(browser, "/workflows");
    await Promise.all([page.waitForURL(new RegExp(`/workflows/workspaces/${workspace.id}$`)), page.getByRole("link", { name: "API keys and environment variables of Dashboard settings" }).last().click()]);
    const create = page.getByRole("form", { name: "Create an API key" });
    await create.getByLabel("Key name").fill("CI pipeline");
    await submit(page, "Create key", create);
    const key = await page.getByRole("region", { name: "New API key" }).locator("code.api-key").innerText();
    expect(key).toMatch(/^orb_[0-9a-f]{48}$/);
    await screenshot(page, "workspace-new-key");
    const [row] = await sql<{ id: string; prefix: string; created_by: string; revoked_at: Date | null }[]>`select id, prefix, created_by, revoked_at from public.api_keys where workspace_id = ${workspace.id} and name = 'CI pipeline'`;
    expect(row.prefix).toBe(key.slice(0, 12));
    expect(row.created_by).toBe(workspace.owner.id);
    const [{ matches }] = await sql<{ matches: number }[]>`select count(*)::int as matches from workflows_private.api_key_hashes where api_key_id = ${row.id} and key_hash = workflows_private.api_key_digest(${key})`;
    expect(matches).toBe(1);

    // Never again: not on the page once reloaded, not in the address bar.
    expect(page.url()).not.toContain(key);
    await page.goto(`${studioUrl}/workflows/workspaces/${workspace.id}`);
    expect(await page.content()).not.toContain(key);
    expect(await page.locator(`tr[data-key-id='${row.id}'] td`).nth(1).innerText()).toBe(`${key.slice(0, 12)}…`);

    await submit(page, "Revoke", page.locator(`tr[data-key-id='${row.id}']`));
    expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe("Revoke the key CI pipeline?");
    expect(await page.getByRole("region", { name: "What will be lost" }).innerText()).toContain(key.slice(0, 12));
    expect((await sql`select 1 from public.api_keys where id = ${row.id} and revoked_at is null`).length).toBe(1);
    await submit(page, "Revoke key");
    expect(await page.getByRole("status").innerText()).toBe("Revoked the key CI pipeline");
    expect((await sql`select 1 from public.api_keys where id = ${row.id} and revoked_at is not null`).length).toBe(1);
    expect(await page.locator(`tr[data-key-id='${row.id}']`).getByRole("button", { name: "Revoke" }).count()).toBe(0);
    await page.context().close();
  }, 120_000);

  it("sets, replaces and deletes an environment variable without ever showing its value", async () => {
    const page = await openPage(browser, `/workflows/workspaces/${workspace.id}`);
    const form = page.getByRole("form", { name: "Set an environment variable" });
    await form.getByLabel("Variable name").fill("PAYMENTS_TOKEN");
    await form.getByLabel("Value").fill("first-secret-3f9a");
    await submit(page, "Set variable", form);
    expect(await page.getByRole("status").innerText()).toBe("Set PAYMENTS_TOKEN");
    expect(await environment()).toEqual({ PAYMENTS_TOKEN: "first-secret-3f9a" });
    expect(await page.content()).not.toContain("first-secret-3f9a");
    expect(page.url()).not.toContain("first-secret");

    await form.getByLabel("Variable name").fill("PAYMENTS_TOKEN");
    await form.getByLabel("Value").fill("second-secret-77c1");
    await submit(page, "Set variable", form);
    expect(await environment()).toEqual({ PAYMENTS_TOKEN: "second-secret-77c1" });
    expect(await page.content()).not.toContain("second-secret-77c1");
    expect(await page.locator("table.variables tbody tr").count()).toBe(1);
    await screenshot(page, "workspace-variables");

    // A name the table would refuse is refused in words, before anything is sent.
    await form.getByLabel("Variable name").evaluate((input) => input.removeAttribute("pattern"));
    await form.getByLabel("Variable name").fill("9LIVES");
    await form.getByLabel("Value").fill("x");
    await submit(page, "Set variable", form);
    expect(await page.getByRole("alert").innerText()).toContain("letters, digits and _");
    expect(Object.keys(await environment())).toEqual(["PAYMENTS_TOKEN"]);

    await submit(page, "Delete", page.locator("tr[data-variable='PAYMENTS_TOKEN']"));
    expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe("Delete the variable PAYMENTS_TOKEN?");
    expect(await environment()).toEqual({ PAYMENTS_TOKEN: "second-secret-77c1" });
    await submit(page, "Delete variable");
    expect(await page.getByRole("status").innerText()).toBe("Deleted PAYMENTS_TOKEN");
    expect(await environment()).toEqual({});
    await page.context().close();
  }, 120_000);

  it("refuses an unknown workspace or key, and a blank key name, in words", async () => {
    const form = (fields: Record<string, string>) => ({ method: "POST", redirect: "manual" as const, headers: { origin: studioUrl, "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(fields).toString() });
    expect((await fetch(`${studioUrl}/workflows/workspaces/00000000-0000-4000-8000-000000000000`)).status).toBe(404);
    const blank = await fetch(`${studioUrl}/workflows/workspaces/${workspace.id}/keys`, form({ name: " " }));
    expect(blank.status).toBe(303);
    expect(new URL(blank.headers.get("location") ?? "", studioUrl).searchParams.get("error")).toBe("Give the key a name");
    const unknownKey = await fetch(`${studioUrl}/workflows/workspaces/${workspace.id}/keys/00000000-0000-4000-8000-000000000000/revoke`, form({ confirmed: "yes" }));
    expect(unknownKey.status).toBe(404);
    const foreign = await fetch(`${studioUrl}/workflows/workspaces/${workspace.id}/keys`, { ...form({ name: "Evil" }), headers: { origin: "http://evil.example", "content-type": "application/x-www-form-urlencoded" } });
    expect(foreign.status).toBe(403);
    expect(await sql`select 1 from public.api_keys where workspace_id = ${workspace.id} and name in (' ', 'Evil')`).toHaveLength(0);
  }, 60_000);
});
