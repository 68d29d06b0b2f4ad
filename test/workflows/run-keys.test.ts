/**
 * API keys and the run lifecycle through supabase-js: users manage keys over the data API; the
 * lifecycle functions answer only the service role (the edge functions); the seeded LOCAL demo key
 * runs the seeded Hello API.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { serviceClient } from "../helpers/clients.ts";
import { WorkflowBuilder } from "../../supabase/functions/_shared/workflows/state/state-builder.ts";
import { createWorkflow, createWorkspace, type TestWorkspace } from "./factories.ts";

/** The key create_api_key returns, the only time its text is shown. */
interface CreatedKey {
  id: string;
  key: string;
  prefix: string;
}

const DEMO_KEY = "orb_local_only_demo_key_000000000000000000000000";
const HELLO_API = "f5000000-0000-4000-8000-000000000003";

describe("API keys and runs through supabase-js", () => {
  let workspace: TestWorkspace;
  let workflowId: string;
  let editorKey: CreatedKey;

  beforeAll(async () => {
    workspace = await createWorkspace("Keys and runs");
    const state = new WorkflowBuilder()
      .block("api", "api_trigger", { inputFormat: [{ name: "name", type: "string" }] }, { name: "API" })
      .block("reply", "response", { body: { hello: "<api.name>" } }, { name: "Reply" })
      .chain("api", "reply")
      .build();
    workflowId = await createWorkflow(workspace.members.editor, workspace.id, "Greeter", state);
    const deployed = await workspace.members.editor.client.rpc("deploy_workflow", { p_workflow_id: workflowId });
    expect(deployed.error).toBeNull();
    const created = await workspace.members.editor.client.rpc("create_api_key", { p_name: "My laptop" }).single<CreatedKey>();
    expect(created.error).toBeNull();
    editorKey = created.data!;
  });

  it("shows a key once and lists it afterwards without its secret", async () => {
    expect(editorKey.key).toMatch(/^orb_[0-9a-f]{48}$/);
    const { data, error } = await workspace.members.editor.client.from("api_keys").select("*");
    expect(error).toBeNull();
    expect(data).toEqual([{
      id: editorKey.id, name: "My laptop", prefix: editorKey.key.slice(0, 12), user_id: workspace.members.editor.id, workspace_id: null,
      created_by: workspace.members.editor.id, created_at: expect.any(String), last_used_at: null, revoked_at: null,
    }]);
  });

  it("returns one {id, key, prefix} object to a plain .rpc(), as documented (not a one-row array)", async () => {
    const { data, error } = await workspace.members.editor.client.rpc("create_api_key", { p_name: "Plain rpc" });
    expect(error).toBeNull();
    expect(data).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), key: expect.stringMatching(/^orb_[0-9a-f]{48}$/), prefix: expect.any(String) });
    expect(data!.prefix).toBe(data!.key.slice(0, 12));
    const { data: byPrefix } = await workspace.members.editor.client.from("api_keys").select("id").eq("prefix", data!.prefix);
    expect(byPrefix).toEqual([{ id: data!.id }]);
  });

  it("lets admins create workspace keys and refuses editors", async () => {
    const byEditor = await workspace.members.editor.client.rpc("create_api_key", { p_name: "Shared", p_workspace_id: workspace.id });
    expect(byEditor.status).toBe(403);
    expect(byEditor.error?.code).toBe("42501");
    const byAdmin = await workspace.members.admin.client.rpc("create_api_key", { p_name: "Shared", p_workspace_id: workspace.id }).single<CreatedKey>();
    expect(byAdmin.error).toBeNull();
    const { data } = await workspace.owner.client.from("api_keys").select("name, workspace_id");
    expect(data).toEqual([{ name: "Shared", workspace_id: workspace.id }]);
  });

  it("keeps the lifecycle functions for the service role", async () => {
    const { error, status } = await workspace.members.editor.client.rpc("admit_workflow_run", { p_workflow_id: workflowId, p_api_key: editorKey.key });
    expect(status).toBe(403);
    expect(error?.code).toBe("42501");
  });

  it("admits, finishes and reports a run for the service role", async () => {
    const service = serviceClient();
    const admitted = await service.rpc("admit_workflow_run", { p_workflow_id: workflowId, p_api_key: editorKey.key });
    expect(admitted.error).toBeNull();
    expect(admitted.data).toMatchObject({ status: 200, outcome: "admitted", runStatus: "running", workflow: { id: workflowId, name: "Greeter", workspaceId: workspace.id } });
    const executionId = (admitted.data as { executionId: string }).executionId;

    const finished = await service.rpc("finish_workflow_run", {
      p_execution_id: executionId, p_status: "completed", p_output: { hello: "Ana" }, p_duration_ms: 3,
      p_response: { status: 200, headers: {}, body: { hello: "Ana" } },
    });
    expect(finished.data).toMatchObject({ outcome: "finished", runStatus: "completed", cost: { total: 0.001 } });

    const job = await service.rpc("workflow_job_status", { p_execution_id: executionId, p_api_key: editorKey.key });
    expect(job.data).toMatchObject({ status: 200, body: { executionId, status: "completed", output: { hello: "Ana" }, metadata: { duration: 3, trigger: "api" } } });

    const { data: runs } = await workspace.members.viewer.client.from("workflow_executions").select("id, status, level, cost_total").eq("workflow_id", workflowId);
    expect(runs).toEqual([{ id: executionId, status: "completed", level: "info", cost_total: 0.001 }]);
  });

  it("stops authenticating a key once it is revoked", async () => {
    const revoked = await workspace.members.editor.client.rpc("revoke_api_key", { p_id: editorKey.id }).single<{ revoked_at: string | null }>();
    expect(revoked.data?.revoked_at).not.toBeNull();
    const { data } = await serviceClient().rpc("admit_workflow_run", { p_workflow_id: workflowId, p_api_key: editorKey.key });
    expect(data).toEqual({ status: 401, outcome: "refused", code: "UNAUTHORIZED", error: "Invalid API key: it does not exist or was revoked" });
  });

  it("runs the seeded Hello API with the seeded LOCAL demo key", async () => {
    const service = serviceClient();
    const { data } = await service.rpc("admit_workflow_run", { p_workflow_id: HELLO_API, p_api_key: DEMO_KEY });
    expect(data).toMatchObject({ status: 200, outcome: "admitted", workflow: { name: "Hello API" }, deployment: { version: 1 } });
    const { executionId } = data as { executionId: string };
    await service.rpc("finish_workflow_run", { p_execution_id: executionId, p_status: "completed", p_output: { message: "Hello, Ana." } });
    const usage = await service.rpc("workflow_usage_limits", { p_api_key: DEMO_KEY });
    expect(usage.data).toMatchObject({ status: 200, body: { success: true, usage: { plan: "free", limit: 10 }, rateLimit: { authType: "api", sync: { limit: 5 } } } });
  });
});
