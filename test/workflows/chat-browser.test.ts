/**
 * The chat page in a real headless Chromium (Debian's /usr/bin/chromium), as a visitor uses it: the
 * page of each access mode, its sign-in step (a password, or an e-mail address and then the code the
 * mail catcher caught), the message list, the answer streamed into it, the earlier turns carried to
 * the next message, and the alerts a refusal shows (docs/triggers.md, "Chat deployments").
 */
import { randomUUID } from "node:crypto";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WorkflowBuilder } from "../../supabase/functions/_shared/workflows/state/state-builder.ts";
import { env } from "../helpers/env.ts";
import { createWorkspace, type TestWorkspace } from "./factories.ts";
import { deployedWorkflow, record, setPlan, sql } from "./execute-api.ts";

const suffix = randomUUID().slice(0, 8);
let workspace: TestWorkspace;
let workflowId: string;
let browser: Browser;

/** Deploys the suite's workflow's chat with these settings. */
async function deployChat(identifier: string, settings: Record<string, unknown> = {}): Promise<void> {
  const { error } = await workspace.members.editor.client.rpc("deploy_chat", {
    p_workflow_id: workflowId, p_identifier: identifier, p_title: "Browser helper", p_outputs: ["Reply.result"], ...settings,
  });
  if (error) throw error;
}

/** A fresh page (its own cookies and session storage) at a chat. */
async function open(identifier: string): Promise<Page> {
  const context = await browser.newContext({ locale: "en-GB" });
  const page = await context.newPage();
  const response = await page.goto(`${env.url}/chat/${identifier}`);
  expect(response?.status()).toBe(200);
  return page;
}

/** Sends a message from the page and waits until its answer has streamed in; returns the answer's text. */
async function send(page: Page, text: string): Promise<string> {
  const answered = page.waitForResponse((response) => response.request().method() === "POST" && !response.url().includes("/login") && !response.url().includes("/otp"));
  await page.getByLabel("Message").fill(text);
  await page.getByRole("button", { name: "Send" }).click();
  const response = await answered;
  expect(response.headers()["content-type"], await response.text().catch(() => "")).toContain("text/event-stream");
  const answer = page.getByRole("log").locator("li.assistant").last();
  await page.waitForFunction(() => !document.querySelector("#messages li[aria-busy]"));
  return await answer.innerText();
}

/** The code the mail catcher holds for an address, newest first. */
async function caughtCode(address: string): Promise<string> {
  const list = (await (await fetch(`${env.mailUrl}/api/messages?to=${encodeURIComponent(address)}`)).json()) as { created_at: string; subject: string }[];
  const newest = list.sort((a, b) => b.created_at.localeCompare(a.created_at))[0];
  return /^(\d{6}) is your code for Browser helper$/.exec(newest?.subject ?? "")?.[1] ?? "";
}

beforeAll(async () => {
  workspace = await createWorkspace("Chat pages");
  await setPlan(workspace.id, "enterprise", { sync_per_minute: 1000, async_per_minute: 1000 });
  workflowId = await deployedWorkflow(workspace.members.editor, workspace.id, "Browser helper", new WorkflowBuilder()
    .block("chat", "chat_trigger", {}, { name: "Chat" })
    .block("reply", "function", { code: "return 'You said: ' + <chat.message> + ' (' + <chat.history>.length + ' earlier lines)';" }, { name: "Reply" })
    .chain("chat", "reply").build());
  browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await sql.end();
});

describe("the chat page in Chromium", () => {
  it("shows a public chat's welcome, then each message and its streamed answer, carrying the conversation", async () => {
    const identifier = `page-${suffix}`;
    await deployChat(identifier, { p_welcome_message: "Ask me anything", p_description: "Answers from the workflow" });
    const page = await open(identifier);
    expect(await page.title()).toBe("Browser helper");
    expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe("Browser helper");
    expect(await page.getByText("Answers from the workflow").isVisible()).toBe(true);
    expect(await page.getByRole("heading", { name: "Sign in" }).isVisible()).toBe(false);
    expect(await page.getByRole("log").locator("li").allInnerTexts()).toEqual(["Ask me anything"]);

    expect(await send(page, "Hello")).toBe("You said: Hello (0 earlier lines)");
    expect(await send(page, "Again")).toBe("You said: Again (2 earlier lines)");
    const messages = page.getByRole("log").locator("li");
    expect(await messages.allInnerTexts()).toEqual(["Ask me anything", "Hello", "You said: Hello (0 earlier lines)", "Again", "You said: Again (2 earlier lines)"]);
    expect(await page.getByRole("log").locator("li.user").count()).toBe(2);

    // The last answer is a chat run of the deployment, recorded as such.
    const [{ id }] = await sql<{ id: string }[]>`select id from public.workflow_executions where workflow_id = ${workflowId} order by started_at desc limit 1`;
    expect(await record(id)).toMatchObject({ status: "completed", trigger: "chat", mode: "sync" });
    await page.context().close();
  });

  it("asks for a password chat's password, shows a wrong one's alert, and chats once signed in", async () => {
    const identifier = `page-pw-${suffix}`;
    await deployChat(identifier, { p_auth_type: "password", p_password: "open sesame please" });
    const page = await open(identifier);
    expect(await page.getByRole("heading", { name: "Sign in" }).isVisible()).toBe(true);
    expect(await page.getByLabel("Message").isVisible()).toBe(false);
    expect(await page.getByLabel("Password").getAttribute("type")).toBe("password");

    await page.getByLabel("Password").fill("wrong password");
    const refused = page.waitForResponse((response) => response.url().endsWith("/login"));
    await page.getByRole("button", { name: "Sign in" }).click();
    expect((await refused).status()).toBe(401);
    expect(await page.getByRole("alert").filter({ hasText: "Wrong password" }).innerText()).toBe("Wrong password; 4 attempts left before a 15-minute lock-out");

    await page.getByLabel("Password").fill("open sesame please");
    const accepted = page.waitForResponse((response) => response.url().endsWith("/login"));
    await page.getByRole("button", { name: "Sign in" }).click();
    expect((await accepted).status()).toBe(200);
    await page.getByLabel("Message").waitFor({ state: "visible" });
    const cookies = await page.context().cookies();
    expect(cookies.find((cookie) => cookie.name === `orbita_chat_${identifier}`)).toMatchObject({ httpOnly: true, sameSite: "Lax" });
    // The script cannot read the session cookie.
    expect(await page.evaluate(() => document.cookie)).toBe("");
    expect(await send(page, "Hi")).toBe("You said: Hi (0 earlier lines)");

    // A reload keeps the session: the page opens on the conversation.
    await page.reload();
    await page.getByLabel("Message").waitFor({ state: "visible" });
    expect(await page.getByRole("heading", { name: "Sign in" }).isVisible()).toBe(false);
    await page.context().close();
  });

  it("asks an e-mail chat for the address, then the code it mailed, and chats once verified", async () => {
    const identifier = `page-mail-${suffix}`;
    const address = `dora-${suffix}@team.example`;
    await deployChat(identifier, { p_auth_type: "email", p_allowed_emails: ["@team.example"] });
    const page = await open(identifier);
    expect(await page.getByLabel("E-mail").isVisible()).toBe(true);
    expect(await page.getByLabel("Code").isVisible()).toBe(false);

    await page.getByLabel("E-mail").fill(address);
    const sent = page.waitForResponse((response) => response.url().endsWith("/otp"));
    await page.getByRole("button", { name: "Send code" }).click();
    expect((await sent).status()).toBe(202);
    await page.getByLabel("Code").waitFor({ state: "visible" });
    // The page cannot tell an allowed address from another (the answer is the same 202), so it says "if".
    expect(await page.getByText(`If ${address} may use this chat, a 6-digit code is on its way to it`).isVisible()).toBe(true);
    const code = await caughtCode(address);
    expect(code).toMatch(/^\d{6}$/);

    await page.getByLabel("Code").fill(code === "000000" ? "111111" : "000000");
    const wrong = page.waitForResponse((response) => response.url().endsWith("/otp/verify"));
    await page.getByRole("button", { name: "Verify code" }).click();
    expect((await wrong).status()).toBe(401);
    expect(await page.getByRole("alert").filter({ hasText: "Wrong code" }).innerText()).toBe("Wrong code; 4 attempts left before a 15-minute lock-out");

    await page.getByLabel("Code").fill(code);
    const verified = page.waitForResponse((response) => response.url().endsWith("/otp/verify"));
    await page.getByRole("button", { name: "Verify code" }).click();
    expect((await verified).status()).toBe(200);
    await page.getByLabel("Message").waitFor({ state: "visible" });
    expect(await send(page, "Status?")).toBe("You said: Status? (0 earlier lines)");
    await page.context().close();
  });

  it("shows a page for an identifier no chat has", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const response = await page.goto(`${env.url}/chat/nobody-${suffix}`);
    expect(response?.status()).toBe(404);
    expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe("Chat not found");
    await context.close();
  });
});
