/**
 * Issue 29, findings 4 and 5, through the gateway as browsers on their own client addresses:
 * someone else's wrong passwords or codes never lock a person out from their own address, a
 * guesser spread over many addresses is still capped per chat, a code request answers alike
 * whether the address is allowed or not, logging out ends the session for every copy of its
 * cookie, and masking is no oracle for guessing a secret (docs/security.md, docs/triggers.md).
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WorkflowBuilder } from "../../supabase/functions/_shared/workflows/state/state-builder.ts";
import { fetchFrom, simulatedClientAddress } from "../helpers/clients.ts";
import { env } from "../helpers/env.ts";
import { createWorkspace, type TestWorkspace } from "../workflows/factories.ts";
import { deployedWorkflow, setPlan, sql, sseFrames } from "../workflows/execute-api.ts";

const suffix = randomUUID().slice(0, 8);
const SECRET = `sk-chat-${suffix}-4f9b2c7d`;
let workspace: TestWorkspace;

/** A browser: its own client address and cookie jar. */
class Browser {
  private readonly fetch = fetchFrom(simulatedClientAddress());
  readonly cookies = new Map<string, string>();

  async send(method: string, path: string, body?: unknown) {
    const cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
    const response = await this.fetch(`${env.url}${path}`, {
      method,
      headers: { ...(body !== undefined ? { "content-type": "application/json" } : {}), ...(cookie ? { cookie } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const setCookie = response.headers.get("set-cookie");
    if (setCookie) {
      const [name, ...value] = setCookie.split(";")[0].split("=");
      if (value.join("") === "") this.cookies.delete(name);
      else this.cookies.set(name, value.join("="));
    }
    const text = await response.text();
    let json: Record<string, unknown> = {};
    try {
      json = JSON.parse(text) as Record<string, unknown>;
    } catch {
      // An event stream.
    }
    return { status: response.status, text, body: json };
  }
}

/** A workflow with a chat trigger, deployed with a chat of these settings. */
async function chat(name: string, identifier: string, settings: Record<string, unknown>, state?: ReturnType<WorkflowBuilder["build"]>): Promise<string> {
  const workflowId = await deployedWorkflow(workspace.members.editor, workspace.id, name, state ?? new WorkflowBuilder()
    .block("chat", "chat_trigger", {}, { name: "Chat" })
    .block("reply", "function", { code: "return 'You said: ' + <chat.message>;" }, { name: "Reply" })
    .chain("chat", "reply").build());
  const { error } = await workspace.members.editor.client.rpc("deploy_chat", { p_workflow_id: workflowId, p_identifier: identifier, p_title: "Helper", ...settings });
  if (error) throw error;
  return identifier;
}

/** The newest code the mail catcher holds for an address. */
async function caughtCode(address: string): Promise<string> {
  const list = (await (await fetch(`${env.mailUrl}/api/messages?to=${encodeURIComponent(address)}`)).json()) as { created_at: string; subject: string }[];
  const newest = list.sort((a, b) => b.created_at.localeCompare(a.created_at))[0];
  return /^(\d{6}) is your code for Helper$/.exec(newest?.subject ?? "")?.[1] ?? "";
}

beforeAll(async () => {
  workspace = await createWorkspace("Chat griefing");
  await setPlan(workspace.id, "enterprise", { sync_per_minute: 1000, async_per_minute: 1000 });
  const { error } = await workspace.owner.client.rpc("set_environment_variable", { p_workspace_id: workspace.id, p_name: "CHAT_SECRET", p_value: SECRET });
  if (error) throw error;
});

afterAll(async () => {
  await sql.end();
});

describe("password lock-outs", () => {
  it("one address's wrong passwords lock out that address, never the real user's", async () => {
    const identifier = await chat("Own address", `own-${suffix}`, { p_auth_type: "password", p_password: "correct horse battery" });
    const attacker = new Browser();
    for (let attempt = 1; attempt <= 4; attempt++) expect((await attacker.send("POST", `/chat/${identifier}/login`, { password: "guess" })).status).toBe(401);
    expect((await attacker.send("POST", `/chat/${identifier}/login`, { password: "guess" })).body).toMatchObject({ code: "TOO_MANY_ATTEMPTS" });
    expect((await attacker.send("POST", `/chat/${identifier}/login`, { password: "correct horse battery" })).status).toBe(429);
    expect((await new Browser().send("POST", `/chat/${identifier}/login`, { password: "correct horse battery" })).status).toBe(200);
  });

  it("caps a guesser spread over many addresses per chat", async () => {
    const identifier = await chat("Spread guesser", `spread-${suffix}`, { p_auth_type: "password", p_password: "correct horse battery" });
    const statuses: number[] = [];
    // Ten addresses, four guesses each: each stays under its own limit of five.
    for (let address = 0; address < 10; address++) {
      const guesser = new Browser();
      for (let attempt = 0; attempt < 4; attempt++) statuses.push((await guesser.send("POST", `/chat/${identifier}/login`, { password: `guess-${address}-${attempt}` })).status);
    }
    expect(statuses.slice(0, 24).every((status) => status === 401)).toBe(true);
    expect(statuses.slice(24).every((status) => status === 429)).toBe(true);
    const right = await new Browser().send("POST", `/chat/${identifier}/login`, { password: "correct horse battery" });
    expect(right.status).toBe(429);
    expect(right.body).toMatchObject({ code: "TOO_MANY_ATTEMPTS", retryAfter: expect.any(Number) });
  });
});

describe("e-mail codes", () => {
  it("answers a code request 202 alike whether or not the address is allowed, mailing only an allowed one", async () => {
    const identifier = await chat("Code requests", `codes-${suffix}`, { p_auth_type: "email", p_allowed_emails: ["@team.example"] });
    const allowed = `ana-${suffix}@team.example`;
    const outsider = `eve-${suffix}@example.com`;
    const browser = new Browser();
    const answers = [await browser.send("POST", `/chat/${identifier}/otp`, { email: allowed }), await browser.send("POST", `/chat/${identifier}/otp`, { email: outsider })];
    for (const answer of answers) {
      expect(answer.status).toBe(202);
      expect(Object.keys(answer.body).sort()).toEqual(["email", "expiresAt", "sent"]);
      expect(answer.body.sent).toBe(true);
    }
    expect(await caughtCode(allowed)).toMatch(/^\d{6}$/);
    expect(await caughtCode(outsider)).toBe("");
  });

  it("a stranger's wrong codes neither void the code nor lock its owner out", async () => {
    const identifier = await chat("Code griefing", `grief-${suffix}`, { p_auth_type: "email", p_allowed_emails: ["@team.example"] });
    const address = `bob-${suffix}@team.example`;
    const owner = new Browser();
    expect((await owner.send("POST", `/chat/${identifier}/otp`, { email: address })).status).toBe(202);
    const code = await caughtCode(address);
    const wrong = code === "000000" ? "111111" : "000000";
    const stranger = new Browser();
    for (let attempt = 1; attempt <= 6; attempt++) await stranger.send("POST", `/chat/${identifier}/otp/verify`, { email: address, code: wrong });
    expect((await stranger.send("POST", `/chat/${identifier}/otp/verify`, { email: address, code: wrong })).body).toMatchObject({ code: "TOO_MANY_ATTEMPTS" });
    const own = await owner.send("POST", `/chat/${identifier}/otp/verify`, { email: address, code });
    expect(own.status).toBe(200);
    expect(own.body).toEqual({ authenticated: true, email: address });
  });
});

describe("logout", () => {
  it("ends the session: a copy of the old cookie is refused afterwards", async () => {
    const identifier = await chat("Logout", `logout-${suffix}`, { p_auth_type: "password", p_password: "correct horse battery" });
    const browser = new Browser();
    expect((await browser.send("POST", `/chat/${identifier}/login`, { password: "correct horse battery" })).status).toBe(200);
    const copy = new Browser();
    for (const [name, value] of browser.cookies) copy.cookies.set(name, value);
    expect((await copy.send("POST", `/chat/${identifier}`, { message: "Hello" })).status).toBe(200);
    expect((await browser.send("POST", `/chat/${identifier}/logout`)).status).toBe(200);
    const refused = await copy.send("POST", `/chat/${identifier}`, { message: "Hello" });
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({ code: "AUTH_REQUIRED" });
    expect((await copy.send("GET", `/chat/${identifier}/config`)).body).toMatchObject({ authenticated: false });
  });
});

describe("the masking oracle", () => {
  it("returns the secret sent as a message as typed, like any wrong guess, while a secret a block reads stays masked", async () => {
    const identifier = await chat("Oracle", `oracle-${suffix}`, { p_outputs: ["Reply.result", "Key.result"] }, new WorkflowBuilder()
      .block("chat", "chat_trigger", {}, { name: "Chat" })
      .block("reply", "function", { code: "return 'You said: ' + <chat.message>;" }, { name: "Reply" })
      .block("key", "function", { code: "return 'The key is {{CHAT_SECRET}}';" }, { name: "Key" })
      .chain("chat", "reply", "key").build());
    const browser = new Browser();
    const text = (answer: { text: string }) => (sseFrames(answer.text).filter((frame) => typeof frame === "object" && frame !== null && "chunk" in frame) as { blockId: string; chunk: string }[])
      .map((frame) => `${frame.blockId}:${frame.chunk}`);

    const guess = await browser.send("POST", `/chat/${identifier}`, { message: `${SECRET}x` });
    expect(text(guess)).toEqual([`reply:You said: ${SECRET}x`, "key:The key is ***"]);
    const right = await browser.send("POST", `/chat/${identifier}`, { message: SECRET });
    expect(text(right)[0]).toBe(`reply:You said: ${SECRET}`);
    const wrong = await browser.send("POST", `/chat/${identifier}`, { message: "sk-chat-wrong-guess" });
    expect(text(wrong)).toEqual(["reply:You said: sk-chat-wrong-guess", "key:The key is ***"]);
  });
});
