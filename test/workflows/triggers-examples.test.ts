/**
 * The trigger examples of docs/triggers.md, run end to end on the stack exactly as the doc tells a
 * user to: each example in examples/workflows/ is deployed, fired through its own trigger (a webhook
 * delivery with its secret, the schedule's ticker at the sample's slot, chat messages through the
 * chat endpoint) and must produce its samples' documented output in a record with its trigger type.
 * (test/workflows/examples.test.ts runs the same samples in the engine alone.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WorkflowStateInput } from "../../supabase/functions/_shared/workflows/state/state-schema.ts";
import { createWorkspace, type TestWorkspace } from "./factories.ts";
import { call, deployedWorkflow, eventually, record, setPlan, sql, sseFrames } from "./execute-api.ts";
import { type Example, loadExamples } from "./examples.ts";

const examples = new Map(loadExamples().map((example) => [example.file, example]));
let workspace: TestWorkspace;

/** The example in examples/workflows/`file`. */
function example(file: string): Example {
  const found = examples.get(file);
  if (!found) throw new Error(`examples/workflows/${file} is missing`);
  return found;
}

/** Deploys an example as a workflow of the suite's workspace; returns its id. */
function deploy(file: string): Promise<string> {
  return deployedWorkflow(workspace.members.editor, workspace.id, example(file).name, example(file).state as WorkflowStateInput);
}

/** Waits until a run has ended and returns its record. */
function ended(executionId: string) {
  return eventually(`run ${executionId} to end`, () => record(executionId), (row) => ["completed", "failed", "cancelled"].includes(row.status), 30_000);
}

/** Sets a workspace environment variable, as the docs tell the user to. */
async function setVariable(name: string, value: string): Promise<void> {
  const { error } = await workspace.owner.client.rpc("set_environment_variable", { p_workspace_id: workspace.id, p_name: name, p_value: value });
  if (error) throw error;
}

beforeAll(async () => {
  workspace = await createWorkspace("Trigger examples");
  await setPlan(workspace.id, "enterprise", { sync_per_minute: 1000, async_per_minute: 1000 });
});

afterAll(async () => {
  await sql.end();
});

describe("the trigger examples, deployed and fired", () => {
  it("support-router.json: each sample delivered to its webhook with the secret header runs as a webhook run", async () => {
    const { samples } = example("support-router.json");
    await setVariable("SUPPORT_WEBHOOK_TOKEN", String(samples[0].env?.SUPPORT_WEBHOOK_TOKEN));
    await deploy("support-router.json");
    const refused = await call("POST", "/api/webhooks/trigger/support-tickets", { body: samples[0].trigger.input });
    expect(refused.status).toBe(401);
    for (const sample of samples) {
      const delivered = await call("POST", "/api/webhooks/trigger/support-tickets", {
        body: sample.trigger.input, headers: { "X-Service-Secret": String(sample.env?.SUPPORT_WEBHOOK_TOKEN) },
      });
      expect(delivered.status, sample.description).toBe(202);
      const run = await ended(String(delivered.body.executionId));
      expect(run, sample.description).toMatchObject({ status: "completed", trigger: "webhook", output: sample.expect.output });
    }
  });

  it("scheduled-digest.json: the ticker at the sample's slot starts a schedule run; its webhook starts the other branch", async () => {
    const [fromSchedule, fromWebhook] = example("scheduled-digest.json").samples;
    const workflowId = await deploy("scheduled-digest.json");
    const slot = String((fromSchedule.trigger.input as { scheduledFor: string }).scheduledFor);
    // The slot lies years ahead (the real ticker never reaches it): the schedule is made due there.
    await sql`update public.workflow_schedules set next_run_at = ${slot}::timestamptz where workflow_id = ${workflowId}`;
    const [{ fired }] = await sql<{ fired: { workflowId: string; executionId?: string; outcome: string }[] }[]>`
      select workflows_private.fire_due_schedules(${slot}::timestamptz + interval '20 seconds') as fired`;
    const mine = fired.filter((entry) => entry.workflowId === workflowId);
    expect(mine).toMatchObject([{ outcome: "started" }]);
    expect(await ended(String(mine[0].executionId))).toMatchObject({ status: "completed", trigger: "schedule", output: fromSchedule.expect.output });

    const delivered = await call("POST", "/api/webhooks/trigger/digest-now", { body: fromWebhook.trigger.input });
    expect(delivered.status).toBe(202);
    expect(await ended(String(delivered.body.executionId))).toMatchObject({ status: "completed", trigger: "webhook", output: fromWebhook.expect.output });
  });

  it("help-desk-chat.json: a chat deployment streams each sample's answer within one conversation", async () => {
    const { samples } = example("help-desk-chat.json");
    const workflowId = await deploy("help-desk-chat.json");
    const { error } = await workspace.members.editor.client.rpc("deploy_chat", { p_workflow_id: workflowId, p_identifier: "help-desk", p_title: "Help desk", p_outputs: ["Answer.result"] });
    expect(error).toBeNull();
    let conversationId: string | undefined;
    for (const sample of samples) {
      const { message } = sample.trigger.input as { message: string };
      const answer = await call("POST", "/chat/help-desk", { body: { message, ...(conversationId ? { conversationId } : {}) } });
      expect(answer.status, sample.description).toBe(200);
      conversationId = String(answer.headers.get("x-conversation-id"));
      const expected = (sample.expect.output as { result: string }).result;
      expect(sseFrames(answer.text), sample.description).toEqual([
        { blockId: "answer", chunk: expected },
        { event: "done", success: true, output: { "Answer.result": expected }, metadata: { duration: expect.any(Number) } },
        "[DONE]",
      ]);
      expect(await record(String(answer.headers.get("x-execution-id")))).toMatchObject({ status: "completed", trigger: "chat", output: sample.expect.output });
    }
  });
});
