import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { RequestError } from "../api/request-error.ts";
import { supabaseWorkflowStore } from "./workflow-store.ts";

/** A stand-in for PostgREST: answers by path, records what was asked and with which token. */
function fakeDataApi(routes: Record<string, { status: number; body: unknown }>) {
  const calls: { path: string; authorization: string | null }[] = [];
  vi.stubGlobal("fetch", (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    const path = new URL(request.url).pathname;
    calls.push({ path, authorization: request.headers.get("authorization") });
    const answer = routes[path] ?? { status: 404, body: { message: "no route" } };
    return Promise.resolve(new Response(JSON.stringify(answer.body), { status: answer.status, headers: { "content-type": "application/json" } }));
  });
  return calls;
}

describe("the Supabase workflow store", () => {
  beforeEach(() => {
    vi.stubEnv("SUPABASE_URL", "http://db.test");
    vi.stubEnv("SUPABASE_ANON_KEY", "anon");
    vi.stubEnv("SUPABASE_SERVICE_ROLE_KEY", "service");
    // supabase-js builds a realtime client even when unused; Node 20 has no WebSocket of its own.
    vi.stubGlobal("WebSocket", class {});
  });
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.unstubAllEnvs();
  });

  it("reads the draft and the caller's role with the caller's token", async () => {
    const calls = fakeDataApi({
      "/rest/v1/workflows": { status: 200, body: [{ id: "w", workspace_id: "ws", name: "W", state: { blocks: {} } }] },
      "/rest/v1/rpc/my_workspace_role": { status: 200, body: "editor" },
    });
    const draft = await supabaseWorkflowStore().loadDraft("Bearer user-token", "w");
    expect(draft).toEqual({ workflowId: "w", workspaceId: "ws", name: "W", state: { blocks: {} }, role: "editor" });
    expect(calls.map((call) => call.authorization)).toEqual(["Bearer user-token", "Bearer user-token"]);
  });

  it("turns a refused token into UNAUTHORIZED and a hidden workflow into null", async () => {
    fakeDataApi({ "/rest/v1/workflows": { status: 401, body: { code: "PGRST301", message: "JWT expired" } } });
    await expect(supabaseWorkflowStore().loadDraft("Bearer old", "w")).rejects.toEqual(expect.objectContaining({ code: "UNAUTHORIZED" }));
    fakeDataApi({ "/rest/v1/workflows": { status: 200, body: [] } });
    expect(await supabaseWorkflowStore().loadDraft("Bearer t", "w")).toBeNull();
    fakeDataApi({ "/rest/v1/workflows": { status: 500, body: { code: "XX000", message: "boom" } } });
    await expect(supabaseWorkflowStore().loadDraft("Bearer t", "w")).rejects.toBeInstanceOf(RequestError);
  });

  it("reads the environment with the service role", async () => {
    const calls = fakeDataApi({ "/rest/v1/rpc/workspace_environment": { status: 200, body: { KEY: "v" } } });
    expect(await supabaseWorkflowStore().loadEnvironment("ws")).toEqual({ KEY: "v" });
    expect(calls[0].authorization).toBe("Bearer service");
  });
});
