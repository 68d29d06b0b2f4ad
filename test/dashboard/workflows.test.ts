/**
 * The dashboard's Workflows page in headless Chromium against the running stack: a workflow's
 * graph, its deployments with the structural diff, a rollback and a promotion
 * (activate_deployment), a manual run of the draft from the Input Format's form with its trace
 * spans, a webhook delivery redelivered (redeliver_webhook, refused in words while still
 * pending), and its schedule's next run.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WorkflowBuilder } from "../../supabase/functions/_shared/workflows/state/state-builder.ts";
import type { WorkflowStateInput } from "../../supabase/functions/_shared/workflows/state/state-schema.ts";
import { until } from "../helpers/until.ts";
import { deployedWorkflow, sql } from "../workflows/execute-api.ts";
import { createWorkspace, type TestWorkspace } from "../workflows/factories.ts";
import { subscribe } from "../workflows/webhooks-helpers.ts";
import { launchBrowser, openPage, screenshot, submit } from "./browser.ts";
import { liftLimits } from "../workflows/logs-helpers.ts";

let browser: Browser;
let workspace: TestWorkspace;
let workflowId: string;
let receiver: Server;
let received = 0;

/** A workflow started by its API trigger (one Input Format field) or by a yearly schedule. */
function greeter(greeting: string): WorkflowStateInput {
  return new WorkflowBuilder()
    .block("api", "api_trigger", { inputFormat: [{ name: "customer", type: "string" }] }, { name: "API" })
    .block("greet", "function", { code: `return '${greeting}, ' + <api.customer>;` }, { name: "Greet" })
    .block("tick", "schedule", { cronExpression: "0 12 1 1 *" }, { name: "Yearly" })
    .block("work", "function", { code: "return 'tick';" }, { name: "Work" })
    .chain("api", "greet").chain("tick", "work").build();
}

async function activeVersion(): Promise<number> {
  const [{ version }] = await sql<{ version: number }[]>`select version from public.workflow_deployments where workflow_id = ${workflowId} and is_active`;
  return version;
}

beforeAll(async () => {
  receiver = createServer((request, response) => {
    received++;
    request.resume();
    response.writeHead(200).end("ok");
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  workspace = await createWorkspace("Dashboard workflows");
  // Manual runs spend the plan's synchronous rate limit (5 a minute on Free); this suite runs more.
  await liftLimits(workspace.id);
  const editor = workspace.members.editor;
  workflowId = await deployedWorkflow(editor, workspace.id, "Dashboard greeter", greeter("Hello"));
  const { error: draftError } = await editor.client.from("workflows").update({ state: greeter("Welcome") }).eq("id", workflowId);
  if (draftError) throw draftError;
  const { error: deployError } = await editor.client.rpc("deploy_workflow", { p_workflow_id: workflowId, p_note: "Warmer greeting" });
  if (deployError) throw deployError;
  await subscribe(editor, workflowId, `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, { trigger_filter: ["manual"] });
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => receiver?.close(resolve));
  await sql.end();
});

describe("the Workflows page in Chromium", () => {
  it("draws the graph, diffs deployments, rolls back and promotes", async () => {
    const page = await openPage(browser, "/workflows");
    const section = page.locator("section").filter({ has: page.getByRole("heading", { name: "Dashboard workflows" }) }).last();
    await Promise.all([page.waitForURL(new RegExp(`/workflows/${workflowId}$`)), section.getByRole("link", { name: "Dashboard greeter" }).click()]);

    const graph = page.getByRole("group", { name: "Graph of Dashboard greeter" });
    expect(await graph.locator("g.block").count()).toBe(4);
    expect(await graph.locator("g.block text").allTextContents()).toEqual(expect.arrayContaining(["API", "api_trigger", "Greet", "function", "Yearly", "schedule"]));
    expect(await graph.locator("line.edge").count()).toBe(2);
    expect(await graph.locator("line.edge[data-source='api'][data-target='greet']").count()).toBe(1);

    const deployments = page.locator("table.deployments tbody tr");
    expect(await deployments.locator("td:first-child").allInnerTexts()).toEqual(["v2 (active)", "v1"]);
    expect(await deployments.first().locator("td").nth(1).innerText()).toBe("Warmer greeting");
    // The draft is what v2 published.
    expect(await page.getByRole("region", { name: "Structural diff" }).innerText()).toContain("No structural differences.");

    await Promise.all([page.waitForURL(/diff=1/), deployments.nth(1).getByRole("link", { name: "Diff" }).click()]);
    const diff = page.getByRole("region", { name: "Structural diff" });
    expect(await diff.getByRole("heading").innerText()).toBe("Diff: version 2 (active) → version 1");
    expect(await diff.innerText()).toContain("Blocks changed");
    expect(await diff.innerText()).toContain("greet");
    await screenshot(page, "workflows-diff");

    // A rollback asks first, naming the version whose changes go out of service.
    await submit(page, "Roll back to v1");
    expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe("Roll Dashboard greeter back to v1?");
    expect(await page.getByRole("region", { name: "What will be lost" }).innerText()).toContain("The changes v2 (Warmer greeting) made stop serving");
    expect(await activeVersion()).toBe(2);
    await submit(page, "Roll back to v1");
    expect(await page.getByRole("status").innerText()).toBe("Version 1 is now active");
    expect(await activeVersion()).toBe(1);
    await submit(page, "Promote to v2");
    expect(await page.getByRole("status").innerText()).toBe("Version 2 is now active");
    expect(await activeVersion()).toBe(2);
    await page.context().close();
  }, 120_000);

  it("runs the draft from its Input Format's form, shows the trace, and redelivers the run's webhook", async () => {
    const page = await openPage(browser, `/workflows/${workflowId}`);
    const form = page.getByRole("form", { name: "Run the draft" });
    await form.getByLabel(/^customer/).fill("Ada");
    await submit(page, "Run", form);
    expect(page.url()).toMatch(/\/workflows\/runs\/[0-9a-f-]{36}\?notice=/);
    expect(await page.getByRole("status").innerText()).toMatch(/^Ran the draft as .+@/);
    expect(await page.locator(".run-status").innerText()).toBe("completed");
    expect(await page.locator(".run-output").innerText()).toContain("Welcome, Ada");
    // What was typed is the run's stored input, not NULL; the duration has its unit; the waterfall a bar a span.
    expect(await page.getByRole("row", { name: /^Input/ }).innerText()).toContain('{"customer":"Ada"}');
    expect(await page.getByRole("row", { name: /^Duration/ }).innerText()).toMatch(/\d+(\.\d+)? (ms|s)$/);
    expect(await page.getByRole("table", { name: "Timing of the run's spans" }).locator("tbody tr .bar").count()).toBe(2);
    const spans = page.locator("li.span");
    expect(await spans.locator("strong").allInnerTexts()).toEqual(["API", "Greet"]);
    await screenshot(page, "workflows-run");
    const executionId = /runs\/([0-9a-f-]{36})/.exec(page.url())?.[1] as string;
    const [run] = await sql<{ trigger: string; status: string; triggered_by: string }[]>`select trigger::text, status::text, triggered_by from public.workflow_executions where id = ${executionId}`;
    expect(run).toMatchObject({ trigger: "manual", status: "completed" });
    expect(run.triggered_by).toBe(workspace.owner.id);

    // The run's webhook, once delivered, is redelivered from the workflow's page.
    await until("the run's webhook to be delivered", async () =>
      (await sql`select 1 from public.webhook_deliveries where execution_id = ${executionId} and status = 'delivered'`).length === 1);
    expect(received).toBe(1);
    await page.goto(`${new URL(page.url()).origin}/workflows/${workflowId}`);
    const delivery = page.locator("table.deliveries tbody tr").first();
    expect(await delivery.locator(".delivery-status").innerText()).toBe("delivered");
    await submit(page, "Redeliver", delivery);
    expect(await page.getByRole("status").innerText()).toBe("Queued the delivery again");
    // Asked again while the new attempt is pending (or just done): refused in words, or queued once more.
    await until("the redelivery to arrive", () => received === 2);
    const [{ redeliveries }] = await sql<{ redeliveries: number }[]>`select redeliveries from public.webhook_deliveries where execution_id = ${executionId}`;
    expect(redeliveries).toBe(1);
    await page.context().close();
  }, 120_000);

  it("labels a Condition's branches, shows a chosen block's configuration, and searches the runs", async () => {
    const [triage] = await sql<{ id: string }[]>`select id from public.workflows where name = 'Order triage' order by created_at limit 1`;
    const page = await openPage(browser, `/workflows/${triage.id}`);
    const graph = page.getByRole("group", { name: "Graph of Order triage" });
    expect(await graph.locator("text.edge-label").allTextContents()).toEqual(expect.arrayContaining(["else", "if <api.total> >= 1000"]));
    const orderSize = page.locator("details.block-config").filter({ hasText: "Order Size" });
    expect(await orderSize.evaluate((details) => (details as HTMLDetailsElement).open)).toBe(false);
    await graph.getByRole("link", { name: /Order Size/ }).click();
    await page.waitForFunction(() => (document.querySelector("details.block-config[open]") as HTMLElement | null)?.innerText.includes("Order Size") ?? false);
    expect(await orderSize.locator("pre").innerText()).toContain("\"kind\": \"if\"");
    await screenshot(page, "workflows-branches");

    // The runs: the one just made by the form, found by status and trigger; none for a status it does not have.
    const own = page.getByRole("search", { name: "Search runs" });
    await page.goto(`${new URL(page.url()).origin}/workflows/${workflowId}`);
    await own.getByLabel("Status").selectOption("completed");
    await own.getByLabel("Trigger").selectOption("manual");
    await submit(page, "Search", own);
    const [{ count }] = await sql<{ count: number }[]>`select count(*)::int as count from public.workflow_executions where workflow_id = ${workflowId} and status = 'completed' and trigger = 'manual'`;
    expect(count).toBeGreaterThan(0);
    expect(await page.locator("table.runs tbody tr").count()).toBe(Math.min(20, count));
    expect((await page.locator("table.runs tbody tr td:nth-child(5)").allInnerTexts()).every((text) => /^\d+(\.\d+)? (ms|s)$/.test(text))).toBe(true);
    await own.getByLabel("Status").selectOption("cancelled");
    await submit(page, "Search", own);
    expect(await page.getByText("No run matches.").count()).toBe(1);
    const refused = await fetch(`${process.env.STUDIO_URL}/workflows/${workflowId}?status=lost`);
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain("A run&#39;s status is one of");
    await page.context().close();
  }, 120_000);

  it("refuses to redeliver a delivery still being attempted, in words", async () => {
    const [{ id }] = await sql<{ id: string }[]>`select id from public.webhook_deliveries where workflow_id = ${workflowId} limit 1`;
    // The test before waits for its redelivery to arrive, not for its outcome to be recorded: marked
    // pending before that, the row would be set back to delivered and the click would redeliver.
    await until("the previous redelivery's outcome to be recorded", async () =>
      (await sql<{ status: string }[]>`select status from public.webhook_deliveries where id = ${id}`)[0].status === "delivered");
    await sql`update public.webhook_deliveries set status = 'pending' where id = ${id}`;
    const page = await openPage(browser, `/workflows/${workflowId}`);
    await submit(page, "Redeliver", page.locator(`tr[data-delivery-id='${id}']`));
    expect(await page.getByRole("alert").innerText()).toContain("is still being attempted");
    await page.context().close();
  }, 120_000);

  it("shows the schedule with its next and last run", async () => {
    const page = await openPage(browser, `/workflows/${workflowId}`);
    const schedule = page.locator("table.schedules tbody tr");
    const cells = await schedule.first().locator("td").allInnerTexts();
    const [{ next }] = await sql<{ next: Date }[]>`select next_run_at as next from public.workflow_schedules where workflow_id = ${workflowId}`;
    expect(cells[0]).toBe("Yearly");
    expect(cells[1]).toBe("0 12 1 1 * UTC");
    expect(cells[2]).toBe("active");
    expect(new Date(cells[3]).toISOString()).toBe(next.toISOString());
    expect(cells[4]).toBe("never");
    await screenshot(page, "workflows-page");
    await page.context().close();
  }, 120_000);
});
