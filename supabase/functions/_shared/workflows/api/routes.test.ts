import { describe, expect, it } from "vitest";
import { handleRunFunctionRequest, handleWorkflowRequest } from "./routes.ts";
import type { WorkflowStore } from "../runs/workflow-store.ts";

const ID = "5f0c6d0e-1111-4222-8333-944455556666";
const store: WorkflowStore = {
  loadDraft: (_authorization, workflowId) =>
    Promise.resolve({ workflowId, workspaceId: "ws", name: "W", role: "owner", state: { blocks: { start: { id: "start", type: "manual_trigger", name: "Start" } } } }),
  loadEnvironment: () => Promise.resolve({}),
};
const post = (url: string) => new Request(url, { method: "POST", headers: { authorization: "Bearer t" } });

describe("workflow HTTP routes", () => {
  it("run a draft at /api/workflows/{id}/run and at /workflow-run/{id}", async () => {
    expect((await handleWorkflowRequest(post(`http://x/api/workflows/${ID}/run`), store)).status).toBe(200);
    expect((await handleRunFunctionRequest(post(`http://x/workflow-run/${ID}`), store)).status).toBe(200);
    expect((await handleRunFunctionRequest(post(`http://x/functions/v1/workflow-run/${ID}/`), store)).status).toBe(200);
  });

  it("answer unknown paths with 404 and other methods with 405, as {error, code}", async () => {
    const missing = await handleWorkflowRequest(post(`http://x/api/workflows/${ID}/nothing`), store);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: `No route for POST /api/workflows/${ID}/nothing`, code: "NOT_FOUND" });
    expect((await handleWorkflowRequest(new Request(`http://x/api/workflows/${ID}/run`), store)).status).toBe(405);
  });
});
