import { DashboardError } from "../errors.ts";
import type { StackClient } from "../stack-client.ts";

/** Workspace roles that may run a workflow's draft, most privileged first. */
const RUNNING_ROLES = ["owner", "admin", "editor"];
/** Workspace roles that may manage the workspace's API keys, most privileged first. */
export const ADMIN_ROLES = ["owner", "admin"];

/** The member a manual run acts as, and an access token of theirs. */
export interface MemberSession {
  email: string;
  accessToken: string;
}

/**
 * Signs in as a workspace member in one of `roles` (by default those who may run workflows; the
 * owner first), for the functions that act only for a signed-in user (runs, API keys), as Studio's "impersonate
 * user" does, but through the auth service itself: the admin API generates a magic link's token
 * and /verify exchanges it for a session, so the token is one the stack issued.
 */
export async function memberSession(stack: StackClient, workspaceId: string, roles: string[] = RUNNING_ROLES): Promise<MemberSession> {
  const members = await stack.json<{ user_id: string; role: string }[]>(`/rest/v1/workspace_members?select=user_id,role&workspace_id=eq.${workspaceId}&role=in.(${roles.join(",")})`);
  members.sort((a, b) => roles.indexOf(a.role) - roles.indexOf(b.role));
  for (const member of members) {
    const user = await stack.json<{ email: string | null }>(`/auth/v1/admin/users/${member.user_id}`);
    if (!user.email) continue;
    const link = await stack.json<{ hashed_token: string }>("/auth/v1/admin/generate_link", { method: "POST", json: { type: "magiclink", email: user.email } });
    const session = await stack.json<{ access_token: string }>("/auth/v1/verify", { method: "POST", json: { type: "magiclink", token_hash: link.hashed_token } });
    return { email: user.email, accessToken: session.access_token };
  }
  throw new DashboardError(409, `The workspace has no ${roles.join(" or ")} with an e-mail address to act as`);
}
