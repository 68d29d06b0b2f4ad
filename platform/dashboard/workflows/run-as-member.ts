import { DashboardError } from "../errors.ts";
import type { StackClient } from "../stack-client.ts";

/** Workspace roles that may run a workflow's draft, most privileged first. */
const RUNNING_ROLES = ["owner", "admin", "editor"];

/** The member a manual run acts as, and an access token of theirs. */
export interface MemberSession {
  email: string;
  accessToken: string;
}

/**
 * Signs in as a workspace member who may run workflows (the owner first), as Studio's "impersonate
 * user" does, but through the auth service itself: the admin API generates a magic link's token
 * and /verify exchanges it for a session, so the token is one the stack issued.
 */
export async function memberSession(stack: StackClient, workspaceId: string): Promise<MemberSession> {
  const members = await stack.json<{ user_id: string; role: string }[]>(`/rest/v1/workspace_members?select=user_id,role&workspace_id=eq.${workspaceId}&role=in.(${RUNNING_ROLES.join(",")})`);
  members.sort((a, b) => RUNNING_ROLES.indexOf(a.role) - RUNNING_ROLES.indexOf(b.role));
  for (const member of members) {
    const user = await stack.json<{ email: string | null }>(`/auth/v1/admin/users/${member.user_id}`);
    if (!user.email) continue;
    const link = await stack.json<{ hashed_token: string }>("/auth/v1/admin/generate_link", { method: "POST", json: { type: "magiclink", email: user.email } });
    const session = await stack.json<{ access_token: string }>("/auth/v1/verify", { method: "POST", json: { type: "magiclink", token_hash: link.hashed_token } });
    return { email: user.email, accessToken: session.access_token };
  }
  throw new DashboardError(409, "The workspace has no owner, admin or editor with an e-mail address to run the workflow as");
}
