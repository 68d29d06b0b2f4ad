import { beforeAll, describe, expect, it } from "vitest";
import { WorkflowBuilder } from "../../supabase/functions/_shared/workflows/state/state-builder.ts";
import type { ValidationIssue } from "../../supabase/functions/_shared/workflows/state/issues.ts";
import { createWorkflow, createWorkspace, type TestWorkspace } from "./factories.ts";

function greeter(code = "return 'hello ' + <api.name>;") {
  return new WorkflowBuilder()
    .block("api", "api_trigger", { inputFormat: [{ name: "name", type: "string", value: "Ana" }] }, { name: "API" })
    .block("greet", "function", { code }, { name: "Greet" })
    .chain("api", "greet")
    .build();
}

interface Deployment {
  version: number;
  is_active: boolean;
  note: string | null;
}

describe("managing workflows through supabase-js", () => {
  let workspace: TestWorkspace;
  let workflowId: string;

  beforeAll(async () => {
    workspace = await createWorkspace("Management");
    workflowId = await createWorkflow(workspace.members.editor, workspace.id, "Greeter", greeter());
  });

  it("creates a workspace with its creator as owner, billed to a Free account", async () => {
    const { owner } = workspace;
    const { data } = await owner.client.from("workspaces").select("name, billing_accounts(plan)").eq("id", workspace.id).single();
    expect(data).toEqual({ name: "Management", billing_accounts: { plan: "free" } });
    const { data: role } = await owner.client.rpc("my_workspace_role", { p_workspace_id: workspace.id });
    expect(role).toBe("owner");
  });

  it("saves a draft and refuses an invalid one, naming the block and field", async () => {
    const { client } = workspace.members.editor;
    const saved = await client.from("workflows").update({ state: greeter("return 'hi ' + <api.name>;") }).eq("id", workflowId).select("state").single();
    expect(saved.error).toBeNull();
    const broken = greeter();
    broken.blocks.greet.config = { code: 42 };
    const { error, status } = await client.from("workflows").update({ state: broken }).eq("id", workflowId);
    expect(status).toBe(400);
    expect(error).toMatchObject({ code: "23514", message: 'Block "Greet" (function): blocks.greet.config.code must be a string' });
    const issues = JSON.parse(error?.details ?? "[]") as ValidationIssue[];
    expect(issues).toEqual([{ code: "invalid_config", blockId: "greet", blockName: "Greet", field: "blocks.greet.config.code", message: 'Block "Greet" (function): blocks.greet.config.code must be a string' }]);
  });

  it("refuses a Response header name HTTP refuses when the draft is saved, not at run time", async () => {
    const { client } = workspace.members.editor;
    const answering = new WorkflowBuilder()
      .block("api", "api_trigger", {}, { name: "API" })
      .block("reply", "response", { headers: { "X-Order\nSet-Cookie": "a=b", "X-Fine": "1" }, body: "ok" }, { name: "Reply" })
      .chain("api", "reply")
      .build();
    const { error, status } = await client.from("workflows").update({ state: answering }).eq("id", workflowId);
    expect(status).toBe(400);
    const message = 'Block "Reply" (response): header name "X-Order\\nSet-Cookie" is not a valid HTTP field name (RFC 9110: letters, digits and !#$%&\'*+-.^_`|~ only; no spaces or line breaks)';
    expect(error).toMatchObject({ code: "23514", message });
    expect(JSON.parse(error?.details ?? "[]")).toEqual([{ code: "invalid_block_config", blockId: "reply", blockName: "Reply", field: "blocks.reply.config.headers", message }]);
    const { data } = await client.from("workflows").select("state").eq("id", workflowId).single<{ state: { blocks: Record<string, unknown> } }>();
    expect(Object.keys(data!.state.blocks)).not.toContain("reply");
  });

  it("checks a state without saving it", async () => {
    const { data } = await workspace.members.viewer.client.rpc("validate_workflow_state", { p_state: { blocks: {} }, p_mode: "deploy" });
    expect(data).toEqual([{ code: "no_trigger", field: "blocks", message: "The workflow has no enabled trigger block, so nothing can start it" }]);
  });

  it("deploys, lists the history, diffs, promotes and rolls back", async () => {
    const { client } = workspace.members.editor;
    const first = await client.rpc("deploy_workflow", { p_workflow_id: workflowId, p_note: "First" }).single<Deployment>();
    expect(first.data).toMatchObject({ version: 1, is_active: true, note: "First" });

    await client.from("workflows").update({ state: greeter("return 'hey ' + <api.name>;") }).eq("id", workflowId);
    const diff = await client.rpc("diff_workflow_deployment", { p_workflow_id: workflowId });
    expect(diff.data).toMatchObject({
      from: { version: 1, active: true },
      to: { draft: true },
      identical: false,
      blocks: { added: [], removed: [], changed: [{ id: "greet", fields: [], configKeys: ["code"] }] },
      edges: { added: [], removed: [] },
    });

    const second = await client.rpc("deploy_workflow", { p_workflow_id: workflowId }).single<Deployment>();
    expect(second.data).toMatchObject({ version: 2, is_active: true });
    const history = await workspace.members.viewer.client.from("workflow_deployments").select("version, is_active, note").eq("workflow_id", workflowId).order("version");
    expect(history.data).toEqual([
      { version: 1, is_active: false, note: "First" },
      { version: 2, is_active: true, note: null },
    ]);

    const rollback = await client.rpc("activate_deployment", { p_workflow_id: workflowId, p_version: 1 }).single<Deployment>();
    expect(rollback.data).toMatchObject({ version: 1, is_active: true });
    const again = await client.rpc("activate_deployment", { p_workflow_id: workflowId, p_version: 1 }).single<Deployment>();
    expect(again.error).toBeNull();
    const active = await client.from("workflow_deployments").select("version").eq("workflow_id", workflowId).eq("is_active", true);
    expect(active.data).toEqual([{ version: 1 }]);

    const versions = await client.rpc("diff_workflow_deployment", { p_workflow_id: workflowId, p_version: 1, p_compare_to: 2 });
    expect(versions.data).toMatchObject({ from: { version: 1 }, to: { version: 2 }, blocks: { changed: [{ id: "greet", configKeys: ["code"] }] } });

    const missing = await client.rpc("activate_deployment", { p_workflow_id: workflowId, p_version: 9 });
    expect(missing.status).toBe(404);
    expect(missing.error).toMatchObject({ code: "PT404", message: 'Workflow "Greeter" has no deployment version 9', hint: "Versions run from 1 to 2." });
  });

  it("lets viewers read but not deploy, and hides workflows from outsiders", async () => {
    const viewer = await workspace.members.viewer.client.rpc("deploy_workflow", { p_workflow_id: workflowId });
    expect(viewer.status).toBe(403);
    expect(viewer.error?.code).toBe("42501");
    const outsider = (await createWorkspace("Elsewhere")).owner;
    const hidden = await outsider.client.rpc("activate_deployment", { p_workflow_id: workflowId, p_version: 1 });
    expect(hidden.status).toBe(404);
    const rows = await outsider.client.from("workflows").select("id").eq("id", workflowId);
    expect(rows.data).toEqual([]);
  });

  it("answers a viewer's insert with 42501, and a viewer's update or delete with success and no row changed", async () => {
    const { client } = workspace.members.viewer;
    const inserted = await client.from("workflows").insert({ workspace_id: workspace.id, name: "By a viewer" });
    expect(inserted.status).toBe(403);
    expect(inserted.error?.code).toBe("42501");
    // PostgREST applies row-level security as a filter: rows a viewer may not change are not found.
    const updated = await client.from("workflows").update({ name: "Renamed by a viewer" }).eq("id", workflowId);
    expect(updated.error).toBeNull();
    expect(updated.status).toBe(204);
    const returned = await client.from("workflows").update({ name: "Renamed by a viewer" }).eq("id", workflowId).select("id");
    expect(returned).toMatchObject({ status: 200, error: null, data: [] });
    const deleted = await client.from("workflows").delete().eq("id", workflowId);
    expect(deleted.error).toBeNull();
    const { data } = await client.from("workflows").select("name").eq("id", workflowId).single();
    expect(data).toEqual({ name: "Greeter" });
  });

  it("bills a second workspace made without an account to the creator's first, Free account", async () => {
    const { owner } = workspace;
    const second = await owner.client.rpc("create_workspace", { p_name: "Second" }).single<{ id: string; billing_account_id: string }>();
    expect(second.error).toBeNull();
    const { data: first } = await owner.client.from("workspaces").select("billing_account_id").eq("id", workspace.id).single();
    expect(second.data?.billing_account_id).toBe(first?.billing_account_id);
    const { data: accounts } = await owner.client.from("billing_accounts").select("id, plan").eq("owner_id", owner.id);
    expect(accounts).toEqual([{ id: first?.billing_account_id, plan: "free" }]);
  });

  it("keeps environment values write-only", async () => {
    const admin = workspace.members.admin.client;
    const set = await admin.rpc("set_environment_variable", { p_workspace_id: workspace.id, p_name: "GREETING", p_value: "Bom dia" }).single<Record<string, unknown>>();
    expect(set.error).toBeNull();
    expect(Object.keys(set.data ?? {}).sort()).toEqual(["created_at", "created_by", "id", "name", "updated_at", "workspace_id"]);
    const listed = await workspace.members.viewer.client.from("environment_variables").select("*").eq("workspace_id", workspace.id);
    expect(listed.data?.map((row) => row.name)).toEqual(["GREETING"]);
    const decrypted = await admin.rpc("workspace_environment", { p_workspace_id: workspace.id });
    expect(decrypted.error?.code).toBe("42501");
    const editor = await workspace.members.editor.client.rpc("set_environment_variable", { p_workspace_id: workspace.id, p_name: "X", p_value: "y" });
    expect(editor.status).toBe(403);
  });
});
