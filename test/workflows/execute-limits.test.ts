/**
 * The execute endpoint's limits through HTTP: each plan's sync and async buckets admit their
 * size and answer the rest 429 with Retry-After; an account at its usage limit answers 402; a run
 * that takes the unbilled overage to $50 bills a threshold invoice. The buckets refill continuously
 * (a plan's size a minute), so a burst that takes longer than an instant may see a token come back:
 * the bounds below allow exactly that many more, and no fewer than the bucket.
 */
import { afterAll, describe, expect, it } from "vitest";
import { WorkflowBuilder } from "../../supabase/functions/_shared/workflows/state/state-builder.ts";
import { createWorkspace } from "./factories.ts";
import { apiKey, call, deployedWorkflow, execute, expectDocumented, setPlan, sql } from "./execute-api.ts";

const EXECUTE = "/api/workflows/{workflowId}/execute";

/** A workspace on `plan` with a deployed one-block workflow and an editor's key. */
async function account(plan: "free" | "pro" | "team" | "enterprise", overrides: Parameters<typeof setPlan>[2] = {}) {
  const workspace = await createWorkspace(`Limits ${plan}`);
  const accountId = await setPlan(workspace.id, plan, overrides);
  const workflowId = await deployedWorkflow(workspace.members.editor, workspace.id, "One block", new WorkflowBuilder()
    .block("api", "api_trigger", {}, { name: "API" })
    .block("done", "response", { body: { ok: true } }, { name: "Done" })
    .chain("api", "done").build());
  return { workspace, accountId, workflowId, key: (await apiKey(workspace.members.editor)).key };
}

/** Sends `count` requests at once; returns the statuses, the answers and how long the burst took. */
async function burst(count: number, send: () => ReturnType<typeof execute>) {
  const started = Date.now();
  const answers = await Promise.all(Array.from({ length: count }, send));
  return { answers, seconds: (Date.now() - started) / 1000, admitted: answers.filter((answer) => answer.status < 300).length };
}

afterAll(async () => {
  await sql.end();
});

describe("rate limits per plan", () => {
  it.each([
    ["free", "sync", 5, {}],
    ["free", "async", 10, {}],
    ["pro", "sync", 10, {}],
    ["pro", "async", 50, {}],
    ["team", "sync", 50, {}],
    ["team", "async", 100, {}],
    ["enterprise", "sync", 7, { sync_per_minute: 7 }],
  ] as const)("%s admits %s runs up to its bucket and answers the rest 429 with Retry-After", async (plan, mode, limit, overrides) => {
    const { workflowId, key } = await account(plan, overrides);
    const headers: Record<string, string> = mode === "async" ? { "X-Execution-Mode": "async" } : {};
    const { answers, seconds, admitted } = await burst(limit + 3, () => execute(workflowId, key, {}, headers));
    // Tokens that came back while the burst was going (the bucket refills `limit` a minute).
    const refilled = Math.ceil((seconds * limit) / 60);
    expect(admitted).toBeGreaterThanOrEqual(limit);
    expect(admitted).toBeLessThanOrEqual(limit + refilled);
    const refused = answers.filter((answer) => answer.status === 429);
    expect(refused.length).toBe(limit + 3 - admitted);
    for (const answer of refused) {
      expect(answer.body).toMatchObject({ code: "RATE_LIMIT_EXCEEDED", error: expect.stringContaining(`${limit} ${mode} runs a minute`) });
      expectDocumented("POST", EXECUTE, answer);
      const retryAfter = Number(answer.headers.get("retry-after"));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(Math.ceil(60 / limit));
      expect(answer.headers.get("x-ratelimit-limit")).toBe(String(limit));
      expect(answer.headers.get("x-ratelimit-remaining")).toBe("0");
    }
    for (const answer of answers.filter((candidate) => candidate.status < 300)) expect(answer.headers.get("x-ratelimit-limit")).toBe(String(limit));
  });

  it("report the buckets without spending them, and count a refusal as nothing", async () => {
    const { workflowId, key } = await account("free");
    const limits = async () => (await call("GET", "/api/users/me/usage-limits", { headers: { "X-API-Key": key } })).body as { rateLimit: { sync: { remaining: number } } };
    expect((await limits()).rateLimit.sync.remaining).toBe(5);
    expect((await limits()).rateLimit.sync.remaining).toBe(5);
    await execute(workflowId, key, {});
    expect((await limits()).rateLimit.sync.remaining).toBe(4);
  });
});

describe("usage and billing", () => {
  it("answers 402 USAGE_LIMIT_EXCEEDED once the period's usage reaches the limit", async () => {
    const { workflowId, key, accountId } = await account("free");
    // $0.0005 short of the $10 limit: one more run is admitted (and takes usage past it), the next is not.
    await sql`update workflows_private.account_meters set period_cost = usage_limit - 0.0005 where billing_account_id = ${accountId}`;
    expect((await execute(workflowId, key, {})).status).toBe(200);
    const refused = await execute(workflowId, key, {});
    expect(refused.status).toBe(402);
    expectDocumented("POST", EXECUTE, refused);
    expect(refused.body).toMatchObject({ code: "USAGE_LIMIT_EXCEEDED", usage: { plan: "free", limit: 10, isExceeded: true } });
    const async = await execute(workflowId, key, {}, { "X-Execution-Mode": "async" });
    expect(async.status).toBe(402);
  });

  it("bills a threshold invoice when a run takes the unbilled overage to $50", async () => {
    const { workflowId, key, accountId } = await account("pro");
    // Pro includes $20; $69.999 used leaves the overage $0.001 short of the $50 threshold.
    await sql`update workflows_private.account_meters set period_cost = 69.999 where billing_account_id = ${accountId}`;
    expect(await sql`select 1 from public.invoices where billing_account_id = ${accountId}`).toHaveLength(0);
    expect((await execute(workflowId, key, {})).status).toBe(200);
    const invoices = await sql<{ kind: string; total: string }[]>`select kind::text, total::text from public.invoices where billing_account_id = ${accountId}`;
    expect(invoices).toEqual([{ kind: "threshold", total: "50.00" }]);
  });
});
