/**
 * Approval blocks through the real stack (docs/workflow-runs.md "Approvals"): an async run reaching
 * an approval parks (no lease, a delayed queue message, `paused` with `pauseKind: "approval"` in the
 * runs API); each approver gets an e-mail (the mail catcher) with their own link; the page refuses a
 * wrong e-mail and a used link; a quorum of 2 of 3 resumes the run at once and a Condition branches
 * on the decision; the resume API answers for a program (another workspace's run 404, a run not
 * waiting 409); the timeout's default outcomes on a moved clock; and no token shows in the run's
 * record, its detail, its logs or the platform's log files. Sync and streamed runs that reach an
 * approval are approvals-sync.test.ts's.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WorkflowBuilder } from "../../supabase/functions/_shared/workflows/state/state-builder.ts";
import { loadConfig, PROJECT_ROOT } from "../../platform/config/stack-config.ts";
import { env } from "../helpers/env.ts";
import { latestMail } from "../helpers/auth.ts";
import { runState } from "./durable-helpers.ts";
import { apiKey, call, deployedWorkflow, eventually, execute, expectDocumented, record, setPlan, sql } from "./execute-api.ts";
import { createWorkspace, type TestWorkspace } from "./factories.ts";
import { subscribe } from "./webhooks-helpers.ts";

let workspace: TestWorkspace;
let stranger: TestWorkspace;
let key: string;
let strangerKey: string;
/** A webhook receiver: the bodies of the completion webhooks it was sent. */
let receiver: Server;
const webhookBodies: string[] = [];

/** A unique approver address per test, so each test reads only its own mail. */
const address = (name: string) => `${name}-${crypto.randomUUID().slice(0, 8)}@approvals.test`;

/** api (topic) → approval → Condition on the decision → Shipped | Held, each answering with the decision. */
function approving(config: Record<string, unknown>) {
  return new WorkflowBuilder()
    .block("api", "api_trigger", { inputFormat: [{ name: "topic", type: "string" }] }, { name: "API" })
    .block("ok", "approval", { message: "Ship <api.topic>?", ...config }, { name: "Sign Off" })
    .block("check", "condition", { conditions: [{ id: "yes", kind: "if", expression: "<signoff.decision> === \"approved\"" }, { id: "no", kind: "else" }] }, { name: "Check" })
    .block("shipped", "response", { body: { branch: "shipped", decision: "<signoff.decision>", approvals: "<signoff.approvals>" } }, { name: "Shipped" })
    .block("held", "response", { body: { branch: "held", decision: "<signoff.decision>", decidedBy: "<signoff.decidedBy>" } }, { name: "Held" })
    .chain("api", "ok", "check")
    .edge("check", "shipped", "condition-yes")
    .edge("check", "held", "condition-no")
    .build();
}

async function parkedRun(workflowId: string, topic = "v2"): Promise<string> {
  const answer = await execute(workflowId, key, { topic }, { "X-Execution-Mode": "async" });
  expect(answer.status).toBe(202);
  const executionId = answer.body.executionId as string;
  await eventually("the run to park at the approval", () => runState(sql, executionId), (state) => state.parkedUntil !== null, 40_000);
  return executionId;
}

async function ended(executionId: string) {
  return await eventually("the run to end", () => record(executionId), (run) => run.status !== "running", 40_000);
}

/** Opens a link's page (GET) or answers its form (POST). */
async function page(link: string, form?: Record<string, string>): Promise<{ status: number; html: string }> {
  const response = await fetch(link, form ? { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(form).toString() } : {});
  return { status: response.status, html: await response.text() };
}

/** Every file under `dir` (the stack's logs), read as text. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return filesUnder(path);
    return statSync(path).size < 50_000_000 ? [readFileSync(path, "latin1")] : [];
  });
}

beforeAll(async () => {
  [workspace, stranger] = await Promise.all([createWorkspace("Approvals"), createWorkspace("Elsewhere")]);
  await setPlan(workspace.id, "enterprise", { sync_per_minute: 1000, async_per_minute: 1000 });
  key = (await apiKey(workspace.members.editor)).key;
  strangerKey = (await apiKey(stranger.members.editor)).key;
  receiver = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => void (body += chunk.toString()));
    request.on("end", () => {
      webhookBodies.push(body);
      response.writeHead(200).end("ok");
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
});

afterAll(async () => {
  await new Promise((resolve) => receiver.close(resolve));
  await sql.end();
});

describe("an approval with a quorum of 2 of 3", () => {
  const tokens: string[] = [];
  let executionId: string;
  const [ann, bob, cat] = [address("ann"), address("bob"), address("cat")];

  it("parks the run and e-mails each approver their own link", async () => {
    const workflowId = await deployedWorkflow(workspace.members.editor, workspace.id, "Quorum", approving({
      approvers: [ann, bob, cat], quorum: 2, timeoutMinutes: 60, fields: [{ name: "ticket", label: "Ticket", type: "text", required: true }],
    }));
    await subscribe(workspace.members.editor, workflowId, `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, { include_final_output: true, include_trace_spans: true });
    executionId = await parkedRun(workflowId);
    const state = await runState(sql, executionId);
    expect(state).toMatchObject({ status: "running", checkpoints: ["api"] });
    const [message] = await sql<{ vt: Date }[]>`select vt from pgmq.q_workflow_runs where message ->> 'executionId' = ${executionId}`;
    expect(message.vt.getTime()).toBeGreaterThan(Date.now() + 55 * 60_000);

    const detail = await call("GET", `/api/v2/runs/${executionId}`, { headers: { "X-API-Key": key } });
    expect(detail.body.data).toMatchObject({ status: "paused", paused: { pauseKind: "approval", contextId: "ok", blockedOnBlockId: "ok", approvers: 3, quorum: 2, approvals: 0 } });
    expectDocumented("GET", "/api/v2/runs/{runId}", detail);

    for (const approver of [ann, bob, cat]) {
      const mail = await latestMail(approver);
      expect(mail.subject).toBe("Approval requested: Sign Off (Quorum)");
      expect(mail.link).toMatch(/\/functions\/v1\/workflow-approval\?token=[A-Za-z0-9_-]{43}$/);
      tokens.push(new URL(mail.link).searchParams.get("token")!);
    }
    expect(new Set(tokens).size).toBe(3);
  }, 60_000);

  it("shows the message with its references filled in, and refuses a wrong e-mail", async () => {
    const link = (await latestMail(ann)).link;
    const form = await page(link);
    expect(form.status).toBe(200);
    expect(form.html).toContain("Ship v2?");
    expect(form.html).toContain("2 of 3 approvers must approve");
    const wrong = await page(link, { email: bob, decision: "approve", "field.ticket": "T-1" });
    expect(wrong.status).toBe(403);
    expect(wrong.html).toContain("not the e-mail address this link was sent to");
    const missing = await page(link, { email: ann, decision: "approve" });
    expect([missing.status, missing.html.includes("field &quot;ticket&quot; is required")]).toEqual([400, true]);
  });

  it("takes one answer per link, and resumes the run at once when the quorum is reached", async () => {
    const annLink = (await latestMail(ann)).link;
    const first = await page(annLink, { email: ann.toUpperCase(), decision: "approve", comment: "looks good", "field.ticket": "T-1" });
    expect([first.status, first.html.includes("waits for the other approvers")]).toEqual([200, true]);
    const again = await page(annLink, { email: ann, decision: "reject", "field.ticket": "T-1" });
    expect([again.status, again.html.includes("Link already used")]).toEqual([409, true]);
    expect((await page(annLink)).status).toBe(409);
    expect((await runState(sql, executionId)).parkedUntil).not.toBeNull();

    const decidedAt = Date.now();
    const second = await page((await latestMail(bob)).link, { email: bob, decision: "approve", "field.ticket": "T-2" });
    expect([second.status, second.html.includes("This decided the approval: approved")]).toEqual([200, true]);
    const run = await ended(executionId);
    expect(run.status).toBe("completed");
    expect(Date.now() - decidedAt).toBeLessThan(15_000);
    expect(run.output).toMatchObject({
      data: { branch: "shipped", decision: "approved", approvals: [
        { email: ann, via: "link", decision: "approve", comment: "looks good", fields: { ticket: "T-1" } },
        { email: bob, via: "link", decision: "approve", comment: null, fields: { ticket: "T-2" } },
      ] },
    });
    expect((await page((await latestMail(cat)).link)).html).toContain("Approval closed");
  }, 60_000);

  it("keeps the tokens out of the run's record, its detail, its logs, its webhook and the platform's log files", async () => {
    await eventually("the completion webhook", async () => webhookBodies.filter((body) => body.includes(executionId)), (bodies) => bodies.length > 0);
    const detail = await call("GET", `/api/v2/runs/${executionId}`, { headers: { "X-API-Key": key } });
    const logs = await call("GET", `/api/v1/logs/${executionId}`, { headers: { "X-API-Key": key } });
    const [row] = await sql<{ text: string }[]>`select e::text as text from public.workflow_executions e where e.id = ${executionId}`;
    const [stored] = await sql<{ text: string }[]>`select coalesce(string_agg(a::text, ' '), '') as text from workflows_private.run_approval_answers a`;
    const logFiles = filesUnder(loadConfig("test").logDir);
    for (const token of tokens) {
      for (const [where, text] of [["detail", detail.text], ["logs", logs.text], ["record", row.text], ["approvals", stored.text], ["webhook", webhookBodies.join("\n")]] as const) {
        expect(text.includes(token), `${where} holds a token`).toBe(false);
      }
      expect(logFiles.some((file) => file.includes(token)), "a log file holds a token").toBe(false);
    }
  });
});

describe("the resume API", () => {
  it("lets a workspace's key decide, and answers 404 for another workspace's run and 409 for a run not waiting", async () => {
    const workflowId = await deployedWorkflow(workspace.members.editor, workspace.id, "Resumed", approving({ approverRole: "admin", timeoutMinutes: 60 }));
    const executionId = await parkedRun(workflowId);
    const body = { input: { decision: "reject", comment: "not now" } };
    const foreign = await call("POST", `/api/v2/runs/${executionId}/resume`, { headers: { "X-API-Key": strangerKey }, body });
    expect([foreign.status, foreign.body.code]).toEqual([404, "NOT_FOUND"]);
    const invalid = await call("POST", `/api/v2/runs/${executionId}/resume`, { headers: { "X-API-Key": key }, body: { input: { decision: "perhaps" } } });
    expect(invalid.status).toBe(400);
    const resumed = await call("POST", `/api/v2/workflows/${workflowId}/runs/${executionId}/resume`, { headers: { "X-API-Key": key }, body: { contextId: "ok", ...body } });
    expect([resumed.status, resumed.body]).toEqual([202, { data: { runId: executionId, contextId: "ok", decision: "rejected" } }]);
    expectDocumented("POST", "/api/v2/runs/{runId}/resume", resumed);
    const run = await ended(executionId);
    expect(run.output).toMatchObject({ data: { branch: "held", decision: "rejected", decidedBy: "api" } });
    const late = await call("POST", `/api/v2/runs/${executionId}/resume`, { headers: { "X-API-Key": key }, body });
    expect([late.status, late.body.code]).toEqual([409, "NOT_PAUSED"]);
    expectDocumented("POST", "/api/v2/runs/{runId}/resume", late);
  }, 60_000);
});

describe("the Approvals curl examples in docs/workflow-runs.md", () => {
  it("run as written against a parked run: its pause, then a decision", async () => {
    const docs = readFileSync(join(PROJECT_ROOT, "docs", "workflow-runs.md"), "utf8");
    const [block] = [...docs.matchAll(/```sh\n([\s\S]*?)\n```/g)].map((match) => match[1]).filter((text) => text.includes("/resume"));
    const lines = block.split("\n");
    const settings = lines.filter((line) => /^[A-Z]+=/.test(line)).join("\n");
    const commands = lines.filter((line) => line.startsWith("curl "));
    expect(commands).toHaveLength(2);
    const workflowId = await deployedWorkflow(workspace.members.editor, workspace.id, "Curl approval", approving({ approvers: [address("curl")], timeoutMinutes: 60 }));
    const executionId = await parkedRun(workflowId);
    const answers = commands.map((command) => {
      const written = `${settings}\n${command}`.replaceAll("http://127.0.0.1:54321", env.url).replaceAll("<apiKey>", key).replaceAll("<runId>", executionId);
      const output = execFileSync("bash", ["-c", written.replace(/^curl /m, "curl -s -w '\\n%{http_code}' ")], { encoding: "utf8" });
      return { status: Number(output.slice(output.lastIndexOf("\n") + 1)), body: JSON.parse(output.slice(0, output.lastIndexOf("\n"))) as Record<string, unknown> };
    });
    expect(answers[0]).toMatchObject({ status: 200, body: { data: { status: "paused", paused: { pauseKind: "approval", contextId: "ok" } } } });
    expect(answers[1]).toEqual({ status: 202, body: { data: { runId: executionId, contextId: "ok", decision: "approved" } } });
    expect((await ended(executionId)).output).toMatchObject({ data: { branch: "shipped", decision: "approved" } });
  }, 60_000);
});

describe("the timeout", () => {
  it("decides by each default outcome when the clock passes it, and fails the block for `fail`", async () => {
    const outcomes = ["approve", "reject", "fail"] as const;
    const runs = await Promise.all(outcomes.map(async (outcome) => {
      const workflowId = await deployedWorkflow(workspace.members.editor, workspace.id, `Times out to ${outcome}`, approving({ approvers: [address(outcome)], timeoutMinutes: 30, defaultOutcome: outcome }));
      return await parkedRun(workflowId);
    }));
    const [{ decided }] = await sql<{ decided: number }[]>`select public.expire_workflow_approvals(now() + interval '31 minutes') as decided`;
    expect(decided).toBeGreaterThanOrEqual(3);
    const [approved, rejected, failed] = await Promise.all(runs.map(ended));
    expect(approved.output).toMatchObject({ data: { branch: "shipped", decision: "approved", approvals: [] } });
    expect(rejected.output).toMatchObject({ data: { branch: "held", decision: "rejected", decidedBy: "timeout" } });
    expect(failed).toMatchObject({ status: "failed", error_code: "BLOCK_TIMEOUT", failed_block: { id: "ok", name: "Sign Off", type: "approval" } });
  }, 90_000);
});
