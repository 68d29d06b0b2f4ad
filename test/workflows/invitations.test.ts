/**
 * Joining a workspace through supabase-js (issue 29, finding 7): an admin cannot add a user
 * without consent, and nothing an admin is answered tells whether a user id exists.
 */
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { createTestUser, type TestUser } from "../helpers/clients.ts";
import { createWorkspace, type TestWorkspace } from "./factories.ts";

describe("workspace invitations", () => {
  let workspace: TestWorkspace;
  let guest: TestUser;

  beforeAll(async () => {
    [workspace, guest] = await Promise.all([createWorkspace("Invitations"), createTestUser()]);
  });

  it("refuses an admin's direct insert of a member alike for a user and for an id that is no user", async () => {
    const admin = workspace.members.admin.client;
    const real = await admin.from("workspace_members").insert({ workspace_id: workspace.id, user_id: guest.id, role: "viewer" });
    const made = await admin.from("workspace_members").insert({ workspace_id: workspace.id, user_id: randomUUID(), role: "viewer" });
    expect(real.status).toBe(403);
    expect(made.status).toBe(real.status);
    expect(made.error?.code).toBe(real.error?.code);
    expect(made.error?.message).toBe(real.error?.message);
    const { data } = await guest.client.rpc("my_workspace_role", { p_workspace_id: workspace.id });
    expect(data).toBeNull();
  });

  it("answers an invitation alike for a user and for an id that is no user", async () => {
    const admin = workspace.members.admin.client;
    const real = await admin.from("workspace_invitations").insert({ workspace_id: workspace.id, user_id: guest.id, role: "editor" });
    const made = await admin.from("workspace_invitations").insert({ workspace_id: workspace.id, user_id: randomUUID(), role: "editor" });
    expect([real.status, real.error]).toEqual([201, null]);
    expect([made.status, made.error]).toEqual([201, null]);
  });

  it("lets the invited user see and accept the invitation, joining with its role", async () => {
    const mine = await guest.client.from("workspace_invitations").select("workspace_id, role, invited_by");
    expect(mine.data).toEqual([{ workspace_id: workspace.id, role: "editor", invited_by: workspace.members.admin.id }]);
    const accepted = await guest.client.rpc("accept_workspace_invitation", { p_workspace_id: workspace.id }).single();
    expect(accepted.error).toBeNull();
    expect(accepted.data).toMatchObject({ workspace_id: workspace.id, user_id: guest.id, role: "editor" });
    const { data } = await guest.client.rpc("my_workspace_role", { p_workspace_id: workspace.id });
    expect(data).toBe("editor");
  });

  it("answers 404 to accepting without an invitation, alike for a real workspace and a made-up id", async () => {
    const stranger = await createTestUser();
    const real = await stranger.client.rpc("accept_workspace_invitation", { p_workspace_id: workspace.id });
    const made = await stranger.client.rpc("accept_workspace_invitation", { p_workspace_id: randomUUID() });
    expect(real.status).toBe(404);
    expect(real.error?.code).toBe("PT404");
    expect([made.status, made.error?.code, made.error?.message]).toEqual([real.status, real.error?.code, real.error?.message]);
  });
});
