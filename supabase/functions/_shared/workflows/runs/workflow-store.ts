/**
 * The Supabase-backed WorkflowStore. Drafts are read with the caller's own token, so row-level
 * security decides what they may see (and PostgREST verifies the token); only the decrypted
 * environment, which no client may read, is fetched with the service role.
 */
import { z } from "zod";
import { createCallerClient, createServiceRoleClient } from "../../supabase-clients.ts";
import type { WorkflowStore } from "./manual-run.ts";
import { RequestError } from "../api/run-response.ts";

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
