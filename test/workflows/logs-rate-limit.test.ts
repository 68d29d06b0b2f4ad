/**
 * The logs API's own rate limit (spec, Limits: Free 10, Pro 30, Team 60 requests a minute), per
 * billing account, in X-RateLimit-* headers on every answer and enforced with 429 + Retry-After.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { serviceClient } from "../helpers/clients.ts";
import { createWorkspace, type TestWorkspace } from "./factories.ts";
import { billingAccountOf, getLogs } from "./logs-helpers.ts";

async function keyOf(client: TestWorkspace["owner"]["client"], name: string, workspaceId?: string): Promise<string> {
  const { data, error } = await client.rpc("create_api_key", { p_name: name, p_workspace_id: workspaceId }).single<{ key: string }>();
  if (error) throw error;
  return data.key;
}

describe("the logs API's rate limit", () => {
  let free: TestWorkspace;
  let editorKey: string;
  let viewerKey: string;

  beforeAll(async () => {
    free = await createWorkspace("Rate-limited logs");
    [editorKey, viewerKey] = await Promise.all([keyOf(free.members.editor.client, "Editor"), keyOf(free.members.viewer.client, "Viewer")]);
  });

  it("allows a Free account 10 requests a minute across its keys, then answers 429 with Retry-After", async () => {
    // Bad parameters are refused before the database: they spend nothing.
    for (let i = 0; i < 3; i += 1) expect((await getLogs(editorKey, "", { workspaceId: free.id, limit: "0" })).status).toBe(400);
    const remaining: string[] = [];
    for (let i = 0; i < 10; i += 1) {
      const response = await getLogs(i % 2 === 0 ? editorKey : viewerKey, i % 3 === 0 ? "/00000000-0000-4000-8000-000000000000" : "", { ...(i % 3 === 0 ? {} : { workspaceId: free.id }) });
      expect(response.status).toBe(i % 3 === 0 ? 404 : 200);
      expect(response.headers.get("x-ratelimit-limit")).toBe("10");
      remaining.push(response.headers.get("x-ratelimit-remaining") ?? "");
    }
    expect(remaining).toEqual(["9", "8", "7", "6", "5", "4", "3", "2", "1", "0"]);

    const refused = await getLogs(viewerKey, "", { workspaceId: free.id });
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(6);
    expect(refused.body).toEqual({ error: `Rate limit exceeded: 10 logs API requests a minute; retry in ${retryAfter} s`, code: "RATE_LIMIT_EXCEEDED", retryAfter });
    expect(refused.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(Date.parse(refused.headers.get("x-ratelimit-reset") ?? "")).toBeGreaterThan(Date.now());
    for (const path of ["/00000000-0000-4000-8000-000000000000", "/executions/00000000-0000-4000-8000-000000000000"]) {
      expect((await getLogs(editorKey, path)).status).toBe(429);
    }

    // The bucket refills continuously: one request a 6 s at Free's rate.
    await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000 + 250));
    const again = await getLogs(editorKey, "", { workspaceId: free.id });
    expect(again.status).toBe(200);
    expect(again.headers.get("x-ratelimit-remaining")).toBe("0");
  }, 30_000);

  it.each([["pro", 30], ["team", 60]])("allows a %s account %i requests a minute", async (plan, limit) => {
    const workspace = await createWorkspace(`Logs on ${plan}`);
    const key = await keyOf(workspace.owner.client, "Shared", workspace.id);
    const changed = await serviceClient().from("billing_accounts").update({ plan }).eq("id", await billingAccountOf(workspace.id));
    expect(changed.error).toBeNull();
    const started = Date.now();
    const first = await getLogs(key, "", { workspaceId: workspace.id });
    expect(first.headers.get("x-ratelimit-limit")).toBe(String(limit));
    expect(first.headers.get("x-ratelimit-remaining")).toBe(String(limit - 1));
    let answered = 1;
    let last = first;
    while (last.status === 200 && answered < 3 * limit) {
      last = await getLogs(key, "", { workspaceId: workspace.id });
      answered += 1;
    }
    expect(last.status).toBe(429);
    expect(last.headers.get("retry-after")).not.toBeNull();
    // At least the bucket's capacity, and no more than what refilled while the requests were sent.
    const refilled = Math.ceil(((Date.now() - started) / 60_000) * limit);
    expect(answered - 1).toBeGreaterThanOrEqual(limit);
    expect(answered - 1).toBeLessThanOrEqual(limit + refilled);
  }, 30_000);
});
