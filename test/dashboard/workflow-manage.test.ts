/**
 * Managing workflows from the dashboard in headless Chromium against the running stack: create,
 * rename, edit the draft as JSON (the validator's issues shown before anything is saved), deploy,
 * undeploy and delete behind their confirmations, with the stored rows checked after each step.
 */
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WorkflowBuilder } from "../../supabase/functions/_shared/workflows/state/state-builder.ts";
import { sql } from "../workflows/execute-api.ts";
import { createWorkspace, type TestWorkspace } from "../workflows/factories.ts";
import { launchBrowser, openPage, screenshot, studioUrl, submit } from "./browser.ts";

let browser: Browser;
let workspace: TestWorkspace;

/** An edge to a block that does not exist: the validator refuses it even in save mode. */
const BROKEN_STATE = JSON.stringify({ blocks: {}, edges: [{ id: "dangling", source: "nowhere", target: "nobody" }], loops: {}, parallels: {} });

const GREETER = new WorkflowBuilder()
  .block("api", "api_trigger", { inputFormat: [{ name: "customer", type: "string" }] }, { name: "API" })
  .block("greet", "function", { code: "return 'Hi, ' + <api.customer>;" }, { name: "Greet" })
  .chain("api", "greet").build();

async function stored(id: string): Promise<{ name: string; state: { blocks: Record<string, unknown> } } | undefined> {
  const [row] = await sql<{ name: string; state: { blocks: Record<string, unknown> } }[]>`select name, state from public.workflows where id = ${id}`;
  return row;
}

beforeAll(async () => {
  workspace = await createWorkspace("Dashboard management");
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await sql.end();
});

describe("managing workflows in Chromium", () => {
  it("creates, renames, edits, deploys, undeploys and deletes a workflow", async () => {
    const page = await openPage(browser, "/workflows");
    const create = page.getByRole("form", { name: "Create a workflow" });
    await create.getByLabel("Workspace").selectOption(workspace.id);
    await create.getByLabel("Name").fill("Console made");
    await submit(page, "Create workflow", create);
    const id = /\/workflows\/([0-9a-f-]{36})\?/.exec(page.url())?.[1] as string;
    expect(await page.getByRole("status").innerText()).toBe("Created Console made");
    const [row] = await sql<{ workspace_id: string }[]>`select workspace_id from public.workflows where id = ${id}`;
    expect(row.workspace_id).toBe(workspace.id);

    const rename = page.getByRole("form", { name: "Rename the workflow" });
    await rename.getByLabel("New name").fill("Console renamed");
    await submit(page, "Rename", rename);
    expect(await page.getByRole("status").innerText()).toBe("Renamed to Console renamed");
    expect((await stored(id))?.name).toBe("Console renamed");

    // The draft as JSON: not JSON, then a state the validator refuses, are shown back and never stored.
    await Promise.all([page.waitForURL(/\/state$/), page.getByRole("link", { name: "Edit the draft as JSON" }).click()]);
    const editor = page.getByRole("form", { name: "Edit the draft" });
    await editor.getByLabel("State (JSON)").fill("{ not json");
    await submit(page, "Save", editor);
    expect(await page.getByRole("alert").innerText()).toContain("The draft is not JSON");
    expect(await editor.getByLabel("State (JSON)").inputValue()).toBe("{ not json");
    await editor.getByLabel("State (JSON)").fill(BROKEN_STATE);
    await submit(page, "Check", editor);
    const blocking = page.getByRole("region", { name: "Issues that stop saving" });
    expect(await blocking.locator("li").count()).toBeGreaterThan(0);
    await submit(page, "Save", editor);
    expect(await page.getByRole("alert").innerText()).toMatch(/^Not saved: the validator found \d+ issues?$/);
    expect(await blocking.locator("li").count()).toBeGreaterThan(0);
    await screenshot(page, "workflows-edit-issues");
    expect((await stored(id))?.state.blocks).toEqual({});
    await editor.getByLabel("State (JSON)").fill(JSON.stringify(GREETER));
    await submit(page, "Check", editor);
    expect(await blocking.innerText()).toContain("None.");
    expect(await page.getByRole("region", { name: "Issues that would stop a deploy" }).innerText()).toContain("None.");
    expect((await stored(id))?.state.blocks).toEqual({});
    await submit(page, "Save", editor);
    expect(page.url()).toMatch(new RegExp(`/workflows/${id}\\?notice=`));
    expect(await page.getByRole("status").innerText()).toBe("Saved the draft");
    expect(Object.keys((await stored(id))?.state.blocks ?? {}).sort()).toEqual(["api", "greet"]);

    const deploy = page.getByRole("form", { name: "Deploy the draft" });
    await deploy.getByLabel("Deployment note").fill("From the console");
    await submit(page, "Deploy the draft", deploy);
    expect(await page.getByRole("status").innerText()).toBe("Deployed the draft as v1");
    const deployments = () => sql<{ version: number; note: string; is_active: boolean }[]>`select version, note, is_active from public.workflow_deployments where workflow_id = ${id} order by version`;
    expect(await deployments()).toEqual([{ version: 1, note: "From the console", is_active: true }]);

    // Undeploy asks first, and nothing changes until it is confirmed.
    await submit(page, "Undeploy");
    expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe("Undeploy Console renamed?");
    expect((await deployments())[0].is_active).toBe(true);
    await submit(page, "Undeploy");
    expect(await page.getByRole("status").innerText()).toBe("No version is active now");
    expect((await deployments())[0].is_active).toBe(false);

    // Delete names what goes with the workflow, then takes it.
    await submit(page, "Delete workflow");
    expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe("Delete Console renamed?");
    const lost = await page.getByRole("region", { name: "What will be lost" }).innerText();
    expect(lost).toContain("0 runs");
    expect(lost).toContain("1 deployment ");
    await screenshot(page, "workflows-delete-confirm");
    expect(await stored(id)).toBeDefined();
    await submit(page, "Delete workflow");
    expect(new URL(page.url()).pathname).toBe("/workflows");
    expect(await page.getByRole("status").innerText()).toBe("Deleted Console renamed");
    expect(await stored(id)).toBeUndefined();
    expect(await deployments()).toEqual([]);
    await page.context().close();
  }, 180_000);

  it("refuses a blank or over-long name, a deploy of an invalid draft, and an unknown workflow, in words", async () => {
    const form = (fields: Record<string, string>) => ({ method: "POST", redirect: "manual" as const, headers: { origin: studioUrl, "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(fields).toString() });
    const blank = await fetch(`${studioUrl}/workflows/create`, form({ workspace: workspace.id, name: "  " }));
    expect(blank.status).toBe(303);
    expect(new URL(blank.headers.get("location") ?? "", studioUrl).searchParams.get("error")).toBe("Give the workflow a name");
    const long = await fetch(`${studioUrl}/workflows/create`, form({ workspace: workspace.id, name: "x".repeat(201) }));
    expect(new URL(long.headers.get("location") ?? "", studioUrl).searchParams.get("error")).toBe("A workflow's name has at most 200 characters");
    const [{ count }] = await sql<{ count: number }[]>`select count(*)::int as count from public.workflows where workspace_id = ${workspace.id}`;
    expect(count).toBe(0);

    // A draft without a trigger saves but does not deploy: the validator's reason comes back.
    const [{ id }] = await sql<{ id: string }[]>`insert into public.workflows (workspace_id, name) values (${workspace.id}, 'Empty') returning id`;
    const deploy = await fetch(`${studioUrl}/workflows/${id}/deploy`, form({ note: "" }));
    expect(deploy.status).toBe(303);
    expect(new URL(deploy.headers.get("location") ?? "", studioUrl).searchParams.get("error")).toMatch(/trigger/i);
    expect(await sql`select 1 from public.workflow_deployments where workflow_id = ${id}`).toHaveLength(0);

    const unknown = await fetch(`${studioUrl}/workflows/not-a-workflow/state`);
    expect(unknown.status).toBe(404);
    const missing = await fetch(`${studioUrl}/workflows/00000000-0000-4000-8000-000000000000/delete`, form({}));
    expect(missing.status).toBe(404);
  }, 60_000);
});
