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
  const members = { admin, editor, viewer };
  await joinWorkspace(owner, data.id, members);
  return { id: data.id, owner, members };
}

/** `inviter` invites each user with the role it is listed under, and each accepts: how people join a workspace. */
export async function joinWorkspace(inviter: TestUser, workspaceId: string, members: Partial<Record<"owner" | "admin" | "editor" | "viewer", TestUser>>): Promise<void> {
  const invited = Object.entries(members).map(([role, user]) => ({ workspace_id: workspaceId, user_id: user.id, role }));
  const { error } = await inviter.client.from("workspace_invitations").insert(invited);
  if (error) throw error;
  await Promise.all(Object.values(members).map(async (user) => {
    const accepted = await user.client.rpc("accept_workspace_invitation", { p_workspace_id: workspaceId });
    if (accepted.error) throw accepted.error;
  }));
}

/** Creates a workflow in the workspace as `user`; returns its id. */
export async function createWorkflow(user: TestUser, workspaceId: string, name: string, state: WorkflowStateInput): Promise<string> {
  const { data, error } = await user.client.from("workflows").insert({ workspace_id: workspaceId, name, state }).select("id").single<{ id: string }>();
  if (error) throw error;
  return data.id;
}
