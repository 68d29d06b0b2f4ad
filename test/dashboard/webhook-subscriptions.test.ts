/**
 * A workflow's webhook subscriptions in the dashboard, in headless Chromium against the running
 * stack: add one (its signing secret shown once and stored encrypted), pause and resume it, give
 * it a new secret, and replay its dead letters, with the stored rows checked after each step.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WorkflowBuilder } from "../../supabase/functions/_shared/workflows/state/state-builder.ts";
import { until } from "../helpers/until.ts";
import { deployedWorkflow, sql } from "../workflows/execute-api.ts";
import { createWorkspace } from "../workflows/factories.ts";
import { liftLimits } from "../workflows/logs-helpers.ts";
import { launchBrowser, openPage, screenshot, studioUrl, submit } from "./browser.ts";

let browser: Browser;
let workflowId: string;
let receiver: Server;
let received = 0;

async function storedSecret(subscriptionId: string): Promise<string> {
  const [{ secret }] = await sql<{ secret: string }[]>`select extensions.pgp_sym_decrypt(secret_encrypted, workflows_private.environment_key()) as secret from workflows_private.webhook_secrets where subscription_id = ${subscriptionId}`;
  return secret;
}

beforeAll(async () => {
  receiver = createServer((request, response) => {
    received++;
    request.resume();
    response.writeHead(200).end("ok");
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const workspace = await createWorkspace("Dashboard hooks");
  await liftLimits(workspace.id);
  const state = new WorkflowBuilder().block("api", "api_trigger", {}, { name: "API" }).block("work", "function", { code: "return 1;" }, { name: "Work" }).chain("api", "work").build();
  workflowId = await deployedWorkflow(workspace.members.editor, workspace.id, "Hooked", state);
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => receiver?.close(resolve));
  await sql.end();
});

describe("webhook subscriptions in Chromium", () => {
  it("adds, pauses, resumes, re-keys a subscription and replays its dead letters", async () => {
    const page = await openPage(browser, `/workflows/${workflowId}`);
    const add = page.getByRole("form", { name: "Add a webhook subscription" });
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    await add.getByLabel("Receiver URL").fill(url);
    await submit(page, "Add subscription", add);
    const secret = await page.getByRole("region", { name: "New signing secret" }).locator("code.signing-secret").innerText();
    expect(secret).toMatch(/^[0-9a-f]{64}$/);
    const [subscription] = await sql<{ id: string; has_secret: boolean; active: boolean; secret: string | null }[]>`select id, has_secret, active, secret from public.webhook_subscriptions where workflow_id = ${workflowId} and url = ${url}`;
    expect(subscription).toMatchObject({ has_secret: true, active: true, secret: null });
    expect(await storedSecret(subscription.id)).toBe(secret);

    await page.goto(`${studioUrl}/workflows/${workflowId}`);
    expect(await page.content()).not.toContain(secret);
    const row = page.locator(`tr[data-subscription-id='${subscription.id}']`);
    await submit(page, "Pause", row);
    expect(await page.getByRole("status").innerText()).toBe(`Paused deliveries to ${url}`);
    expect((await sql`select active from public.webhook_subscriptions where id = ${subscription.id}`)[0].active).toBe(false);
    await submit(page, "Resume", row);
    expect((await sql`select active from public.webhook_subscriptions where id = ${subscription.id}`)[0].active).toBe(true);

    await submit(page, "New secret", row);
    const rotated = await page.getByRole("region", { name: "New signing secret" }).locator("code.signing-secret").innerText();
    expect(rotated).toMatch(/^[0-9a-f]{64}$/);
    expect(rotated).not.toBe(secret);
    expect(await storedSecret(subscription.id)).toBe(rotated);

    // A run's delivery, made dead (as six failed attempts would leave it), is listed and replayed.
    await page.goto(`${studioUrl}/workflows/${workflowId}`);
    await submit(page, "Run", page.getByRole("form", { name: "Run the draft" }));
    const executionId = /runs\/([0-9a-f-]{36})/.exec(page.url())?.[1] as string;
    await until("the run's webhook to be delivered", async () =>
      (await sql`select 1 from public.webhook_deliveries where execution_id = ${executionId} and status = 'delivered'`).length === 1);
    const before = received;
    const [{ id: deliveryId }] = await sql<{ id: string }[]>`update public.webhook_deliveries set status = 'failed', failed_at = now(), last_status_code = 503, last_response_excerpt = 'receiver down' where execution_id = ${executionId} returning id`;
    await page.goto(`${studioUrl}/workflows/${workflowId}`);
    const dead = page.locator(`table.dead-letters tr[data-dead-letter-id='${deliveryId}']`);
    expect(await dead.innerText()).toContain("receiver down");
    await screenshot(page, "workflows-subscriptions");
    await submit(page, "Redeliver dead letters", page.locator(`tr[data-subscription-id='${subscription.id}']`));
    expect(await page.getByRole("status").innerText()).toBe("Queued 1 dead letter again");
    await until("the dead letter to arrive again", () => received === before + 1);
    await until("the replay's outcome to be recorded", async () =>
      (await sql<{ status: string }[]>`select status from public.webhook_deliveries where id = ${deliveryId}`)[0].status === "delivered");
    await page.context().close();
  }, 180_000);

  it("refuses a URL that is not http(s) and an unknown subscription, in words", async () => {
    const form = (fields: Record<string, string>) => ({ method: "POST", redirect: "manual" as const, headers: { origin: studioUrl, "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(fields).toString() });
    const bad = await fetch(`${studioUrl}/workflows/${workflowId}/subscriptions`, form({ url: "ftp://example.com/x" }));
    expect(bad.status).toBe(303);
    expect(new URL(bad.headers.get("location") ?? "", studioUrl).searchParams.get("error")).toContain("absolute http or https");
    expect(await sql`select 1 from public.webhook_subscriptions where url = 'ftp://example.com/x'`).toHaveLength(0);
    expect((await fetch(`${studioUrl}/workflows/subscriptions/00000000-0000-4000-8000-000000000000/rotate`, form({}))).status).toBe(404);
  }, 60_000);
});
