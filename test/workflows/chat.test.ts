/**
 * Chat deployments through the gateway, as a browser's script calls them: deploy_chat, the
 * streamed answer with the conversation's earlier turns, the three access modes (public, a
 * password with its lock-out, e-mail codes read from the mail catcher with their limits), forged
 * and expired session cookies, the subdomain form, and every refusal in the documented shape with
 * nothing run (docs/triggers.md).
 */
import { request as httpRequest } from "node:http";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WorkflowBuilder } from "../../supabase/functions/_shared/workflows/state/state-builder.ts";
import { signSession } from "../../supabase/functions/_shared/workflows/api/chat/chat-session.ts";
import { fetchFrom, simulatedClientAddress } from "../helpers/clients.ts";
import { env } from "../helpers/env.ts";
import { createWorkspace, type TestWorkspace } from "./factories.ts";
import { deployedWorkflow, expectDocumented, record, setPlan, sql, sseFrames } from "./execute-api.ts";

/** The stack's session secret (test/fixtures/functions.env), so the suite can make an expired cookie. */
process.env.CHAT_SESSION_SECRET = "test-stack-only-chat-session-secret-0123456789";

const suffix = randomUUID().slice(0, 8);
let workspace: TestWorkspace;
let workflowId: string;

/** A browser: its own client address and cookie jar. */
class Browser {
  private readonly fetch = fetchFrom(simulatedClientAddress());
  readonly cookies = new Map<string, string>();

  async send(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    const cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
    const response = await this.fetch(`${env.url}${path}`, {
      method,
      headers: { ...(body !== undefined ? { "content-type": "application/json" } : {}), ...(cookie ? { cookie } : {}), ...headers },
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    });
    const setCookie = response.headers.get("set-cookie");
    if (setCookie) {
      const [pair] = setCookie.split(";");
      const [name, ...value] = pair.split("=");
      if (value.join("") === "") this.cookies.delete(name);
      else this.cookies.set(name, value.join("="));
    }
    const text = await response.text();
    let json: Record<string, unknown> = {};
    try {
      json = JSON.parse(text) as Record<string, unknown>;
    } catch {
      // An event stream or a page.
    }
    return { status: response.status, headers: response.headers, text, body: json, setCookie };
  }

  /** Sends a chat message and reads the whole answer. */
  message(identifier: string, message: string, conversationId?: string) {
    return this.send("POST", `/chat/${identifier}`, { message, ...(conversationId ? { conversationId } : {}) });
  }
}

/** Deploys the suite's workflow's chat with these settings. */
async function deployChat(identifier: string, settings: Record<string, unknown> = {}) {
  const { data, error } = await workspace.members.editor.client.rpc("deploy_chat", {
    p_workflow_id: workflowId, p_identifier: identifier, p_title: "Helper", p_outputs: ["Reply.result"], ...settings,
  });
  if (error) throw error;
  return data as { identifier: string; url: string; authType: string };
}

/** The newest code the mail catcher holds for an address. */
async function caughtCode(address: string): Promise<string> {
  const list = (await (await fetch(`${env.mailUrl}/api/messages?to=${encodeURIComponent(address)}`)).json()) as { id: string; created_at: string; subject: string }[];
  const newest = list.sort((a, b) => b.created_at.localeCompare(a.created_at))[0];
  return /^(\d{6}) is your code for Helper$/.exec(newest.subject)?.[1] ?? "";
}

/** How many runs the workflow has recorded. */
async function runCount(): Promise<number> {
  const [{ count }] = await sql<{ count: number }[]>`select count(*)::int as count from public.workflow_executions where workflow_id = ${workflowId}`;
  return count;
}

beforeAll(async () => {
  workspace = await createWorkspace("Chats");
  await setPlan(workspace.id, "enterprise", { sync_per_minute: 1000, async_per_minute: 1000 });
  workflowId = await deployedWorkflow(workspace.members.editor, workspace.id, "Helper", new WorkflowBuilder()
    .block("chat", "chat_trigger", {}, { name: "Chat" })
    .block("reply", "function", { code: "return 'You said: ' + <chat.message> + ' (' + <chat.history>.length + ' earlier lines in ' + <chat.conversationId> + ')';" }, { name: "Reply" })
    .chain("chat", "reply").build());
});

afterAll(async () => {
  await sql.end();
});

describe("a public chat", () => {
  const identifier = `helper-${suffix}`;

  it("is deployed with an identifier and a URL", async () => {
    const chat = await deployChat(identifier, { p_welcome_message: "Ask me anything" });
    expect(chat).toMatchObject({ identifier, url: `http://127.0.0.1:54321/chat/${identifier}`, authType: "public" });
    const config = await new Browser().send("GET", `/chat/${identifier}/config`);
    expect(config.body).toEqual({ identifier, title: "Helper", description: null, welcomeMessage: "Ask me anything", authType: "public", authenticated: true });
    expectDocumented("GET", "/chat/{identifier}/config", config);
  });

  it("runs each message and streams the chosen output, with the conversation's earlier turns", async () => {
    const browser = new Browser();
    const first = await browser.message(identifier, "Hello");
    expect(first.status).toBe(200);
    expect(first.headers.get("content-type")).toContain("text/event-stream");
    const conversationId = String(first.headers.get("x-conversation-id"));
    expect(conversationId).toMatch(/^[0-9a-f-]{36}$/);
    expect(sseFrames(first.text)).toEqual([
      { blockId: "reply", chunk: `You said: Hello (0 earlier lines in ${conversationId})` },
      { event: "done", success: true, output: { "Reply.result": `You said: Hello (0 earlier lines in ${conversationId})` }, metadata: { duration: expect.any(Number) } },
      "[DONE]",
    ]);
    const second = await browser.message(identifier, "Again", conversationId);
    expect(sseFrames(second.text)[0]).toEqual({ blockId: "reply", chunk: `You said: Again (2 earlier lines in ${conversationId})` });
    const run = await record(String(second.headers.get("x-execution-id")));
    expect(run).toMatchObject({ status: "completed", trigger: "chat", mode: "sync" });

    const other = await new Browser().message(identifier, "Hi", `fresh-${suffix}`);
    expect(sseFrames(other.text)[0]).toEqual({ blockId: "reply", chunk: `You said: Hi (0 earlier lines in fresh-${suffix})` });
  });

  it("refuses bad input before anything runs", async () => {
    const browser = new Browser();
    const before = await runCount();
    const empty = await browser.message(identifier, "   ");
    expect(empty.status).toBe(400);
    expect(empty.body).toMatchObject({ code: "INVALID_BODY" });
    expectDocumented("POST", "/chat/{identifier}", empty);
    const malformed = await browser.send("POST", `/chat/${identifier}`, "{nope");
    expect(malformed.body).toEqual({ error: "The body is not valid JSON", code: "INVALID_BODY" });
    const form = await browser.send("POST", `/chat/${identifier}`, "message=hi", { "content-type": "application/x-www-form-urlencoded" });
    expect(form.status).toBe(415);
    const badConversation = await browser.send("POST", `/chat/${identifier}`, { message: "hi", conversationId: "../../etc" });
    expect(badConversation.status).toBe(400);
    const unknown = await browser.message(`nobody-${suffix}`, "hi");
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: `No chat is deployed at "nobody-${suffix}"`, code: "NOT_FOUND" });
    const wrongMode = await browser.send("POST", `/chat/${identifier}/login`, { password: "whatever" });
    expect(wrongMode.body).toMatchObject({ code: "WRONG_AUTH_MODE", authType: "public" });
    expectDocumented("POST", "/chat/{identifier}/login", wrongMode);
    expect(await runCount()).toBe(before);
  });

  it("serves its page, also on its own subdomain", async () => {
    const page = await new Browser().send("GET", `/chat/${identifier}`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("content-security-policy")).toMatch(/script-src 'nonce-[^']+'/);
    expect(page.text).toContain("<h1>Helper</h1>");
    const missing = await new Browser().send("GET", `/chat/nobody-${suffix}`);
    expect(missing.status).toBe(404);
    expect(missing.text).toContain("Chat not found");

    const { port } = new URL(env.url);
    const subdomain = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const call = httpRequest({ host: "127.0.0.1", port, path: "/config", headers: { host: `${identifier}.chat.localhost:${port}` } }, (response) => {
        let body = "";
        response.on("data", (chunk) => (body += chunk));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
      });
      call.on("error", reject);
      call.end();
    });
    expect(subdomain.status).toBe(200);
    expect(JSON.parse(subdomain.body)).toMatchObject({ identifier, title: "Helper" });
  });

  it("answers 403 NOT_DEPLOYED once its workflow is undeployed, and is charged and rate-limited as a sync run", async () => {
    const limited = await createWorkspace("Chat limits");
    const account = await setPlan(limited.id, "enterprise", { sync_per_minute: 1 });
    const limitedFlow = await deployedWorkflow(limited.members.editor, limited.id, "Limited", new WorkflowBuilder()
      .block("chat", "chat_trigger", {}, { name: "Chat" })
      .block("reply", "variables", { assignments: [{ name: "text", value: "<chat.message>" }] }, { name: "Reply" })
      .chain("chat", "reply").build());
    const { error } = await limited.members.editor.client.rpc("deploy_chat", { p_workflow_id: limitedFlow, p_identifier: `limited-${suffix}`, p_title: "Limited" });
    expect(error).toBeNull();
    const browser = new Browser();
    expect((await browser.message(`limited-${suffix}`, "one")).status).toBe(200);
    const second = await browser.message(`limited-${suffix}`, "two");
    expect(second.status).toBe(429);
    expect(second.body).toMatchObject({ code: "RATE_LIMIT_EXCEEDED" });
    expect(Number(second.headers.get("retry-after"))).toBeGreaterThan(0);
    const [{ charged }] = await sql<{ charged: number }[]>`select coalesce(sum(amount), 0)::float8 as charged from public.usage_ledger where billing_account_id = ${account}`;
    expect(charged).toBeCloseTo(0.001, 10);

    expect((await limited.members.editor.client.rpc("undeploy_workflow", { p_workflow_id: limitedFlow })).error).toBeNull();
    const undeployed = await browser.message(`limited-${suffix}`, "three");
    expect(undeployed.status).toBe(403);
    expect(undeployed.body).toMatchObject({ code: "NOT_DEPLOYED" });
  });
});

describe("a password chat", () => {
  const identifier = `secret-${suffix}`;

  beforeAll(async () => {
    await deployChat(identifier, { p_auth_type: "password", p_password: "correct horse battery" });
  });

  it("refuses messages without a session", async () => {
    const answer = await new Browser().message(identifier, "Hello");
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual({ error: "Sign in with the chat's password first", code: "AUTH_REQUIRED", authType: "password" });
    expectDocumented("POST", "/chat/{identifier}", answer);
  });

  it("opens a signed, HttpOnly, expiring session with the right password", async () => {
    const browser = new Browser();
    const login = await browser.send("POST", `/chat/${identifier}/login`, { password: "correct horse battery" });
    expect(login.status).toBe(200);
    expect(login.body).toEqual({ authenticated: true });
    expect(login.setCookie).toMatch(new RegExp(`^orbita_chat_${identifier}=[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+; Max-Age=86400; Path=/; HttpOnly; SameSite=Lax$`));
    expectDocumented("POST", "/chat/{identifier}/login", login);
    expect((await browser.send("GET", `/chat/${identifier}/config`)).body).toMatchObject({ authenticated: true });
    const answer = await browser.message(identifier, "Hello");
    expect(answer.status).toBe(200);
    expect(sseFrames(answer.text).at(-2)).toMatchObject({ event: "done", success: true });
    const kept = String(browser.cookies.get(`orbita_chat_${identifier}`));
    const logout = await browser.send("POST", `/chat/${identifier}/logout`);
    expect(logout.setCookie).toBe(`orbita_chat_${identifier}=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax`);
    expect((await browser.message(identifier, "Hello")).status).toBe(401);
    // A copy of the cookie kept from before the logout (another tab, a stolen copy) is refused too.
    browser.cookies.set(`orbita_chat_${identifier}`, kept);
    const copy = await browser.message(identifier, "Hello");
    expect(copy.status).toBe(401);
    expect(copy.body).toMatchObject({ code: "AUTH_REQUIRED" });
    expect((await browser.send("GET", `/chat/${identifier}/config`)).body).toMatchObject({ authenticated: false });
  });

  it("counts wrong passwords per client and locks it out, saying for how long", async () => {
    const browser = new Browser();
    const first = await browser.send("POST", `/chat/${identifier}/login`, { password: "wrong" });
    expect(first.status).toBe(401);
    expect(first.body).toEqual({ error: "Wrong password; 4 attempts left before a 15-minute lock-out", code: "INVALID_PASSWORD", attemptsLeft: 4 });
    expectDocumented("POST", "/chat/{identifier}/login", first);
    for (let attempt = 2; attempt <= 4; attempt++) expect((await browser.send("POST", `/chat/${identifier}/login`, { password: "wrong" })).status).toBe(401);
    const locked = await browser.send("POST", `/chat/${identifier}/login`, { password: "wrong" });
    expect(locked.status).toBe(429);
    expect(locked.body).toMatchObject({ code: "TOO_MANY_ATTEMPTS", error: "Too many failed attempts: locked out for 15 minutes", retryAfter: 900 });
    expect(locked.headers.get("retry-after")).toBe("900");
    expectDocumented("POST", "/chat/{identifier}/login", locked);
    const right = await browser.send("POST", `/chat/${identifier}/login`, { password: "correct horse battery" });
    expect(right.status).toBe(429);
    // Another device is not locked out.
    expect((await new Browser().send("POST", `/chat/${identifier}/login`, { password: "correct horse battery" })).status).toBe(200);
  });

  it("refuses a forged or expired cookie and one from before the password changed, running nothing", async () => {
    const browser = new Browser();
    await browser.send("POST", `/chat/${identifier}/login`, { password: "correct horse battery" });
    const good = String(browser.cookies.get(`orbita_chat_${identifier}`));
    const before = await runCount();

    const [payload, signature] = good.split(".");
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString()) as { c: string; s: string; v: number; i: string; e: number };
    const forged = `${Buffer.from(JSON.stringify({ ...claims, e: claims.e + 86_400 })).toString("base64url")}.${signature}`;
    browser.cookies.set(`orbita_chat_${identifier}`, forged);
    const refused = await browser.message(identifier, "Hello");
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual({ error: "The chat session cookie is not valid: sign in again", code: "INVALID_SESSION" });

    const expired = await signSession({ chatId: claims.c, subject: claims.s, authVersion: claims.v, sessionId: claims.i, expiresAt: Math.floor(Date.now() / 1000) - 60 });
    browser.cookies.set(`orbita_chat_${identifier}`, expired);
    expect((await browser.message(identifier, "Hello")).body).toEqual({ error: "The chat session has expired: sign in again", code: "SESSION_EXPIRED" });

    browser.cookies.set(`orbita_chat_${identifier}`, good);
    expect((await browser.message(identifier, "Hello")).status).toBe(200);
    await deployChat(identifier, { p_auth_type: "password", p_password: "a brand new password" });
    expect((await browser.message(identifier, "Hello")).body).toMatchObject({ code: "AUTH_REQUIRED" });
    expect(await runCount()).toBe(before + 1);
  });
});

describe("an e-mail chat", () => {
  const identifier = `team-${suffix}`;
  const member = `bob-${suffix}@team.example`;

  beforeAll(async () => {
    await deployChat(identifier, { p_auth_type: "email", p_allowed_emails: ["@team.example", `ana-${suffix}@example.com`] });
  });

  it("sends a 6-digit code to an allowed address and opens a session with it", async () => {
    const browser = new Browser();
    const sent = await browser.send("POST", `/chat/${identifier}/otp`, { email: member });
    expect(sent.status).toBe(202);
    expect(sent.body).toEqual({ sent: true, email: member, expiresAt: expect.any(String) });
    expect(Date.parse(String(sent.body.expiresAt)) - Date.now()).toBeGreaterThan(14 * 60_000);
    expectDocumented("POST", "/chat/{identifier}/otp", sent);
    const code = await caughtCode(member);
    expect(code).toMatch(/^\d{6}$/);

    const wrong = await browser.send("POST", `/chat/${identifier}/otp/verify`, { email: member, code: code === "000000" ? "111111" : "000000" });
    expect(wrong.body).toEqual({ error: "Wrong code; 4 attempts left before a 15-minute lock-out", code: "INVALID_CODE", attemptsLeft: 4 });
    expectDocumented("POST", "/chat/{identifier}/otp/verify", wrong);
    const right = await browser.send("POST", `/chat/${identifier}/otp/verify`, { email: member.toUpperCase(), code });
    expect(right.status).toBe(200);
    expect(right.body).toEqual({ authenticated: true, email: member });
    expect((await browser.send("GET", `/chat/${identifier}/config`)).body).toMatchObject({ authenticated: true, email: member });
    const answer = await browser.message(identifier, "Status?");
    expect(sseFrames(answer.text)[0]).toMatchObject({ blockId: "reply", chunk: expect.stringContaining("You said: Status?") });
    const reused = await new Browser().send("POST", `/chat/${identifier}/otp/verify`, { email: member, code });
    expect(reused.body).toMatchObject({ code: "CODE_EXPIRED" });
  });

  it("answers every well-formed address alike, mailing only allowed ones, at most 3 codes per address", async () => {
    const browser = new Browser();
    const outsiderAddress = `eve-${suffix}@example.com`;
    const outsider = await browser.send("POST", `/chat/${identifier}/otp`, { email: outsiderAddress });
    expect(outsider.status).toBe(202);
    expect(outsider.body).toEqual({ sent: true, email: outsiderAddress, expiresAt: expect.any(String) });
    expectDocumented("POST", "/chat/{identifier}/otp", outsider);
    const malformed = await browser.send("POST", `/chat/${identifier}/otp`, { email: "not an address" });
    expect(malformed.body).toMatchObject({ code: "INVALID_EMAIL" });
    const address = `ana-${suffix}@example.com`;
    for (let send = 1; send <= 3; send++) expect((await browser.send("POST", `/chat/${identifier}/otp`, { email: address })).status).toBe(202);
    const fourth = await browser.send("POST", `/chat/${identifier}/otp`, { email: address });
    expect(fourth.status).toBe(202);
    expect(Object.keys(fourth.body).sort()).toEqual(Object.keys(outsider.body).sort());
    const mails = async (to: string) => ((await (await fetch(`${env.mailUrl}/api/messages?to=${encodeURIComponent(to)}`)).json()) as unknown[]).length;
    expect(await mails(outsiderAddress)).toBe(0);
    expect(await mails(address)).toBe(3);
    // The last code sent still works: asking on someone's behalf cannot keep them out.
    const code = await caughtCode(address);
    expect((await new Browser().send("POST", `/chat/${identifier}/otp/verify`, { email: address, code })).status).toBe(200);
  });

  it("locks out the client address that guessed wrong codes, never the address the code was sent to", async () => {
    const address = `carol-${suffix}@team.example`;
    const carol = new Browser();
    await carol.send("POST", `/chat/${identifier}/otp`, { email: address });
    const code = await caughtCode(address);
    const wrongCode = code === "000000" ? "111111" : "000000";
    const stranger = new Browser();
    for (let attempt = 1; attempt <= 4; attempt++) expect((await stranger.send("POST", `/chat/${identifier}/otp/verify`, { email: address, code: wrongCode })).status).toBe(401);
    const locked = await stranger.send("POST", `/chat/${identifier}/otp/verify`, { email: address, code: wrongCode });
    expect(locked.status).toBe(429);
    expect(locked.body).toMatchObject({ code: "TOO_MANY_ATTEMPTS", retryAfter: 900 });
    expectDocumented("POST", "/chat/{identifier}/otp/verify", locked);
    expect((await stranger.send("POST", `/chat/${identifier}/otp/verify`, { email: address, code })).status).toBe(429);
    const own = await carol.send("POST", `/chat/${identifier}/otp/verify`, { email: address, code });
    expect(own.status).toBe(200);
    expect(own.body).toEqual({ authenticated: true, email: address });
  });
});
