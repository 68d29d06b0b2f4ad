import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { env } from "../helpers/env.ts";
import { createProposal, readProposal, technicianWithProposal } from "./factories.ts";

/**
 * The approval page in a real headless Chromium (Debian's /usr/bin/chromium) with JavaScript
 * disabled: a customer opens the link, reads the proposal, types their e-mail and clicks approve
 * or reject, exactly as without any script.
 */
let context: BrowserContext;
let profileDir: string;
let fixture: Awaited<ReturnType<typeof technicianWithProposal>>;

beforeAll(async () => {
  fixture = await technicianWithProposal("Ana Navegador");
  profileDir = mkdtempSync(join(tmpdir(), "portal-chromium-"));
  context = await chromium.launchPersistentContext(profileDir, {
    executablePath: "/usr/bin/chromium",
    headless: true,
    javaScriptEnabled: false,
    locale: "pt-BR",
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}, 60_000);

afterAll(async () => {
  await context?.close();
  if (profileDir) rmSync(profileDir, { recursive: true, force: true });
});

function link(token: string): string {
  return `${env.url}/functions/v1/approve-proposal?token=${encodeURIComponent(token)}`;
}

describe("approval page in Chromium", () => {
  it("shows the proposal with accessible names for the field and both buttons", async () => {
    const page = await context.newPage();
    const response = await page.goto(link(fixture.proposal.approval_token));
    expect(response?.status()).toBe(200);
    expect(await page.title()).toBe(`Proposta ${fixture.proposal.code} · Orbita`);
    await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe(`Proposta ${fixture.proposal.code}`);
    expect(await page.locator("dl").innerText()).toContain("R$ 1.200,00");
    expect(await page.getByLabel("E-mail do cliente").getAttribute("type")).toBe("email");
    expect(await page.getByRole("button", { name: "Aprovar proposta" }).isVisible()).toBe(true);
    expect(await page.getByRole("button", { name: "Recusar proposta" }).isVisible()).toBe(true);
    await page.close();
  });

  it("a wrong e-mail shows an alert and keeps the proposal pending; the right one approves it", async () => {
    const proposal = await createProposal(fixture.technician, fixture.customer.id, fixture.product.id);
    const page = await context.newPage();
    await page.goto(link(proposal.approval_token));

    await page.getByLabel("E-mail do cliente").fill("alguem@errado.test");
    const refused = page.waitForResponse((response) => response.request().method() === "POST");
    await page.getByRole("button", { name: "Aprovar proposta" }).click();
    expect((await refused).status()).toBe(403);
    expect(await page.getByRole("alert").innerText()).toContain("não é o cadastrado");
    expect(await page.getByLabel("E-mail do cliente").getAttribute("aria-invalid")).toBe("true");
    expect((await readProposal(proposal.id)).status).toBe("pending");

    await page.getByLabel("E-mail do cliente").fill(fixture.customer.email);
    const accepted = page.waitForResponse((response) => response.request().method() === "POST");
    await page.getByRole("button", { name: "Aprovar proposta" }).click();
    expect((await accepted).status()).toBe(200);
    expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe("Proposta aprovada");
    expect((await readProposal(proposal.id)).status).toBe("approved");

    await page.goto(link(proposal.approval_token));
    expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe("Proposta já respondida");
    expect(await page.getByRole("alert").innerText()).toContain("já foi aprovada");
    await page.close();
  });

  it("clicking reject rejects the proposal", async () => {
    const proposal = await createProposal(fixture.technician, fixture.customer.id, fixture.product.id);
    const page = await context.newPage();
    await page.goto(link(proposal.approval_token));
    await page.getByLabel("E-mail do cliente").fill(fixture.customer.email);
    const answered = page.waitForResponse((response) => response.request().method() === "POST");
    await page.getByRole("button", { name: "Recusar proposta" }).click();
    expect((await answered).status()).toBe(200);
    expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe("Proposta recusada");
    expect((await readProposal(proposal.id)).status).toBe("rejected");
    await page.close();
  });

  it("the browser will not submit without an e-mail (required field)", async () => {
    const proposal = await createProposal(fixture.technician, fixture.customer.id, fixture.product.id);
    const page = await context.newPage();
    await page.goto(link(proposal.approval_token));
    await page.getByRole("button", { name: "Aprovar proposta" }).click();
    expect(await page.getByLabel("E-mail do cliente").evaluate((input) => (input as HTMLInputElement).validity.valueMissing)).toBe(true);
    expect((await readProposal(proposal.id)).status).toBe("pending");
    await page.close();
  });
});
