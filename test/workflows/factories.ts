/**
 * Factories for workflow-service tests: a workspace with members in given roles, and workflows,
 * created through the real client exactly as an app would.
 */
import { createTestUser, type TestUser } from "../helpers/clients.ts";
import type { WorkflowStateInput } from "../../supabase/functions/_shared/workflows/state/state-schema.ts";

/** A workspace and its people. */
export interface TestWorkspace {
  id: string;
  owner: TestUser;
  members: Record<"admin" | "editor" | "viewer", TestUser>;
}

/** Creates a workspace owned by a fresh user, with an admin, an editor and a viewer. */
export async function createWorkspace(name = "Test workspace"): Promise<TestWorkspace> {
  const [owner, admin, editor, viewer] = await Promise.all([createTestUser(), createTestUser(), createTestUser(), createTestUser()]);
  const { data, error } = await owner.client.rpc("create_workspace", { p_name: name }).single<{ id: string }>();
  if (error) throw error;
  const { error: membersError } = await owner.client.from("workspace_members").insert([
    { workspace_id: data.id, user_id: admin.id, role: "admin" },
    { workspace_id: data.id, user_id: editor.id, role: "editor" },
    { workspace_id: data.id, user_id: viewer.id, role: "viewer" },
  ]);
  if (membersError) throw membersError;
  return { id: data.id, owner, members: { admin, editor, viewer } };
}

/** Creates a workflow in the workspace as `user`; returns its id. */
export async function createWorkflow(user: TestUser, workspaceId: string, name: string, state: WorkflowStateInput): Promise<string> {
  const { data, error } = await user.client.from("workflows").insert({ workspace_id: workspaceId, name, state }).select("id").single<{ id: string }>();
  if (error) throw error;
  return data.id;
}
