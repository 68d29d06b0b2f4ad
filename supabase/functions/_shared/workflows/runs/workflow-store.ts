/**
 * Where runs read drafts and environments: the WorkflowStore contract, and its Supabase
 * implementation. Drafts are read with the caller's own token, so row-level security decides what
 * they may see (and PostgREST verifies the token); only the decrypted environment, which no client
 * may read, is fetched with the service role.
 */
import { z } from "zod";
import { createCallerClient, createServiceRoleClient } from "../../db/supabase-clients.ts";
import { RequestError } from "../api/request-error.ts";

/** A draft as its caller may see it, with the caller's role in its workspace. */
export interface DraftAccess {
  workflowId: string;
  workspaceId: string;
  name: string;
  state: unknown;
  /** owner, admin, editor or viewer. */
  role: string | null;
}

/** Where runs read drafts and environments (Supabase in production, fakes in tests). */
export interface WorkflowStore {
  /** The draft the caller can see, or null; throws RequestError UNAUTHORIZED for a bad session. */
  loadDraft(authorization: string, workflowId: string): Promise<DraftAccess | null>;
  /** The workspace's decrypted environment variables. */
  loadEnvironment(workspaceId: string): Promise<Record<string, string>>;
}

const draftRow = z.object({ id: z.string(), workspace_id: z.string(), name: z.string(), state: z.unknown() });
const environment = z.record(z.string(), z.string());

/** PostgREST errors that mean "this token is no good" rather than "something broke". */
function isAuthFailure(status: number, code: string | undefined): boolean {
  return status === 401 || code === "PGRST301" || code === "PGRST302" || code === "42501";
}

/** Reads drafts through the data API as the caller, and environments as the service role. */
export function supabaseWorkflowStore(): WorkflowStore {
  return {
    async loadDraft(authorization, workflowId) {
      const client = createCallerClient(authorization);
      const { data, error, status } = await client.from("workflows").select("id, workspace_id, name, state").eq("id", workflowId).maybeSingle();
      if (error) {
        if (isAuthFailure(status, error.code)) throw new RequestError("UNAUTHORIZED", "Sign in to run workflows: the access token was refused");
        throw new RequestError("INTERNAL", "The workflow could not be read");
      }
      if (data === null) return null;
      const row = draftRow.parse(data);
      const role = await client.rpc("my_workspace_role", { p_workspace_id: row.workspace_id });
      if (role.error) throw new RequestError("INTERNAL", "The caller's role could not be read");
      return { workflowId: row.id, workspaceId: row.workspace_id, name: row.name, state: row.state, role: z.string().nullable().parse(role.data) };
    },
    async loadEnvironment(workspaceId) {
      const { data, error } = await createServiceRoleClient().rpc("workspace_environment", { p_workspace_id: workspaceId });
      if (error) throw new RequestError("INTERNAL", "The workspace's environment could not be read");
      return environment.parse(data ?? {});
    },
  };
}
