/**
 * Run retention through the real interfaces (docs/retention.md): an admin sets an Enterprise
 * workspace's own retention through the data API (refused on other plans, and for a viewer), the
 * expiry runs on a clock moved past it (workflows_private.expire_workflow_history with p_now, scoped
 * to this suite's workspace so no other suite's runs are touched), and then every reader of the run
 * answers 410 RUN_EXPIRED with the date through the gateway, while another workspace's key and an
 * unknown id still get 404. Every answer is checked against docs/openapi.yaml.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { WorkflowBuilder } from "../../supabase/functions/_shared/workflows/state/state-builder.ts";
import { type Answer, apiKey, call, deployedWorkflow, execute, expectDocumented, setPlan, sql } from "./execute-api.ts";
import { createWorkspace, type TestWorkspace } from "./factories.ts";
import { liftLimits } from "./logs-helpers.ts";

/** `method path` with `key`, checked against docs/openapi.yaml under `documented`. */
async function read(method: string, path: string, documented: string, key: string): Promise<Answer> {
  const answer = await call(method, path, { headers: { "X-API-Key": key } });
  expectDocumented(method, documented, answer);
  return answer;
}

describe("run retention", () => {
  let workspace: TestWorkspace;
  let workflowId: string;
  let runId: string;
  let expiredAt: string;
  const keys = { editor: "", viewer: "", otherWorkspace: "" };

  beforeAll(async () => {
    workspace = await createWorkspace("Retention");
    await liftLimits(workspace.id, { logsPerMinute: 100_000 });
    workflowId = await deployedWorkflow(workspace.members.editor, workspace.id, "Kept a day", new WorkflowBuilder()
      .block("api", "api_trigger", {}, { name: "API" })
      .block("done", "response", { body: { ok: true } }, { name: "Done" })
      .chain("api", "done").build());
    keys.editor = (await apiKey(workspace.members.editor)).key;
    keys.viewer = (await apiKey(workspace.members.viewer)).key;
    const other = await createWorkspace("Not theirs");
    keys.otherWorkspace = (await apiKey(other.owner, other.id)).key;
  }, 60_000);

  it("lets an admin set the workspace's own retention on Enterprise only, and never a viewer", async () => {
    const refused = await workspace.members.admin.client.from("workspace_log_retention").insert({ workspace_id: workspace.id, log_retention_days: 1 });
    expect(refused.error?.code).toBe("23514");
    expect(refused.error?.message).toBe("A workspace sets its own log retention on the Enterprise plan only; this workspace is on Free, which keeps runs 7 days");

    await setPlan(workspace.id, "enterprise");
    const byViewer = await workspace.members.viewer.client.from("workspace_log_retention").insert({ workspace_id: workspace.id, log_retention_days: 1 });
    expect(byViewer.error?.code).toBe("42501");
    const set = await workspace.members.admin.client.from("workspace_log_retention")
      .insert({ workspace_id: workspace.id, log_retention_days: 1 }).select("log_retention_days").single();
    expect(set.error).toBeNull();
    expect(set.data).toEqual({ log_retention_days: 1 });
    const seen = await workspace.members.viewer.client.from("workspace_log_retention").select("workspace_id, log_retention_days");
    expect(seen.data).toEqual([{ workspace_id: workspace.id, log_retention_days: 1 }]);
  });

  it("keeps a run until its retention has passed, then removes it and leaves a tombstone", async () => {
    const ran = await execute(workflowId, keys.editor, {});
    expect(ran.status).toBe(200);
    runId = ran.headers.get("x-execution-id") as string;
    expect(runId).toMatch(/^[0-9a-f-]{36}$/);

    const hour = 3_600_000;
    const [early] = await sql<{ outcome: { runs: number } }[]>`
      select workflows_private.expire_workflow_history(${new Date(Date.now() + 23 * hour)}, 100, ${workspace.id}::uuid) as outcome`;
    expect(early.outcome.runs).toBe(0);
    expect((await read("GET", `/api/v2/runs/${runId}`, "/api/v2/runs/{runId}", keys.editor)).status).toBe(200);

    const at = new Date(Date.now() + 25 * hour);
    const [late] = await sql<{ outcome: { runs: number } }[]>`
      select workflows_private.expire_workflow_history(${at}, 100, ${workspace.id}::uuid) as outcome`;
    expect(late.outcome.runs).toBe(1);
    expiredAt = at.toISOString();
    const left = await sql`select 1 from public.workflow_executions where id = ${runId}`;
    expect(left.length).toBe(0);
  });

  it("answers 410 RUN_EXPIRED with the date from every reader of the run", async () => {
    const expected = { code: "RUN_EXPIRED", expiredAt, retentionDays: 1 };
    const message = `Run ${runId} expired on ${expiredAt.slice(0, 10)}: its workspace keeps runs for 1 day`;
    const answers = {
      run: await read("GET", `/api/v2/runs/${runId}`, "/api/v2/runs/{runId}", keys.editor),
      workflowRun: await read("GET", `/api/v2/workflows/${workflowId}/runs/${runId}`, "/api/v2/workflows/{workflowId}/runs/{runId}", keys.editor),
      log: await read("GET", `/api/v1/logs/${runId}`, "/api/v1/logs/{id}", keys.editor),
      execution: await read("GET", `/api/v1/logs/executions/${runId}`, "/api/v1/logs/executions/{executionId}", keys.editor),
      job: await read("GET", `/api/jobs/${runId}`, "/api/jobs/{executionId}", keys.editor),
      cancel: await read("POST", `/api/v2/runs/${runId}/cancel`, "/api/v2/runs/{runId}/cancel", keys.editor),
      rerun: await read("POST", `/api/v2/runs/${runId}/rerun`, "/api/v2/runs/{runId}/rerun", keys.editor),
    };
    for (const [reader, answer] of Object.entries(answers)) {
      expect({ reader, status: answer.status, body: answer.body }).toEqual({ reader, status: 410, body: { error: message, ...expected } });
    }
  });

  it("still answers 404 to a key that could not read the run, and for ids that never existed", async () => {
    expect((await read("GET", `/api/v2/runs/${runId}`, "/api/v2/runs/{runId}", keys.otherWorkspace)).body.code).toBe("NOT_FOUND");
    expect((await read("GET", `/api/v1/logs/${runId}`, "/api/v1/logs/{id}", keys.otherWorkspace)).status).toBe(404);
    expect((await read("GET", `/api/v2/workflows/${crypto.randomUUID()}/runs/${runId}`, "/api/v2/workflows/{workflowId}/runs/{runId}", keys.editor)).status).toBe(404);
    expect((await read("GET", `/api/v2/runs/${crypto.randomUUID()}`, "/api/v2/runs/{runId}", keys.editor)).status).toBe(404);
  });
});
