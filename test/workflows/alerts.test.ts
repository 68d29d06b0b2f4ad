/**
 * Alerts end to end (issue 32, item 6): rules made through the data API as an editor would, runs
 * recorded, an evaluation at a chosen time (what pg_cron runs each minute), and the real alerts
 * worker delivering what fired: an e-mail through Resend (the local mail catcher) and a signed
 * `workflow.alert.fired` POST to a webhook subscription's receiver.
 */
import type { Sql } from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { latestMail } from "../helpers/auth.ts";
import type { TestUser } from "../helpers/clients.ts";
import { WebhookReceiver } from "../stand-ins/webhook-receiver.ts";
import { createWorkspace, type TestWorkspace } from "./factories.ts";
import { deployedWorkflow, liftLimits, openDatabase, recordRuns } from "./logs-helpers.ts";
import { eventually, subscribe } from "./webhooks-helpers.ts";

interface AlertEvent {
  id: string;
  rule_id: string;
  observed: number | null;
  message: string;
  delivery: "pending" | "sent" | "failed";
  attempts: number;
  last_error: string | null;
}

describe("alerts", () => {
  let sql: Sql;
  let receiver: WebhookReceiver;
  let workspace: TestWorkspace;
  let editor: TestUser;
  let viewer: TestUser;

  beforeAll(async () => {
    sql = openDatabase();
    receiver = await WebhookReceiver.start();
    workspace = await createWorkspace("Alerts");
    ({ editor, viewer } = workspace.members);
    await liftLimits(workspace.id);
  });

  afterAll(async () => {
    await receiver.stop();
    await sql.end();
  });

  /** Evaluates every rule now, as the per-minute job does. */
  async function evaluate(): Promise<void> {
    await sql`select workflows_private.evaluate_alert_rules(clock_timestamp())`;
  }

  /** The rule's delivered event, as a member reads it. */
  async function sentEventOf(ruleId: string): Promise<AlertEvent> {
    return await eventually(`the alert of rule ${ruleId} to be sent`, async () => {
      const { data, error } = await viewer.client.from("workflow_alert_events").select("*").eq("rule_id", ruleId);
      if (error) throw error;
      const [event] = data as AlertEvent[];
      return event?.delivery === "sent" ? event : undefined;
    });
  }

  it("e-mails the recipients of a rule whose condition holds, once per cooldown", async () => {
    const workflowId = await deployedWorkflow(workspace, "Failing nightly");
    const to = `oncall-${workspace.id}@alerts.test`;
    const { data: rule, error } = await editor.client.from("workflow_alert_rules")
      .insert({ workflow_id: workflowId, name: "Two failures", kind: "consecutive_failures", threshold: 2, channel: "email", email_to: [to] })
      .select().single<{ id: string }>();
    expect(error).toBeNull();
    await recordRuns(sql, [{ workflowId, status: "failed" }, { workflowId, status: "failed" }]);

    await evaluate();
    const event = await sentEventOf(rule!.id);
    expect(event).toMatchObject({ observed: 2, attempts: 1, message: 'Workflow "Failing nightly": the last 2 runs failed' });
    const mail = await latestMail(to);
    expect(mail.subject).toBe("[Orbita alert] Two failures");
    expect(mail.html).toContain("the last 2 runs failed");

    // Still failing a minute later: the cooldown (60 minutes by default) holds it back.
    await evaluate();
    const { data: events } = await viewer.client.from("workflow_alert_events").select("id").eq("rule_id", rule!.id);
    expect(events).toHaveLength(1);
  });

  it("POSTs a signed alert to a webhook subscription's receiver", async () => {
    const workflowId = await deployedWorkflow(workspace, "Expensive");
    receiver.expectSecret("/alerts", "an-alert-signing-secret");
    const subscription = await subscribe(editor, workflowId, receiver.url("/alerts"), { secret: "an-alert-signing-secret", level_filter: ["error"] });
    const { data: rule, error } = await editor.client.from("workflow_alert_rules")
      .insert({ workflow_id: workflowId, name: "Costly run", kind: "cost_per_run", threshold: 0.000001, channel: "webhook", webhook_subscription_id: subscription.id })
      .select().single<{ id: string }>();
    expect(error).toBeNull();
    await recordRuns(sql, [{ workflowId, models: [{ model: "gpt-4o", promptTokens: 1000, completionTokens: 1000 }] }]);

    await evaluate();
    const event = await sentEventOf(rule!.id);
    const [arrival] = receiver.arrivals("/alerts");
    expect(arrival.signatureValid).toBe(true);
    expect(arrival.headers["service-event"]).toBe("workflow.alert.fired");
    expect(arrival.deliveryId).toBe(event.id);
    expect(arrival.json).toMatchObject({ id: event.id, type: "workflow.alert.fired",
      data: { ruleId: rule!.id, ruleName: "Costly run", kind: "cost_per_run", workflowId, message: event.message } });
    expect(JSON.stringify(arrival.json)).not.toContain("an-alert-signing-secret");
  });

  it("refuses a rule that names another workspace's subscription, and a viewer's rule", async () => {
    const other = await createWorkspace("Alerts elsewhere");
    const otherWorkflow = await deployedWorkflow(other, "Theirs");
    const theirs = await subscribe(other.members.editor, otherWorkflow, receiver.url("/theirs"));
    const workflowId = await deployedWorkflow(workspace, "Ours");
    const borrowed = await editor.client.from("workflow_alert_rules")
      .insert({ workflow_id: workflowId, name: "Borrowed", kind: "no_runs", channel: "webhook", webhook_subscription_id: theirs.id });
    expect(borrowed.status).toBe(400);
    expect(borrowed.error?.message).toBe("A webhook rule names a webhook subscription of the same workspace (webhook_subscription_id)");
    const byViewer = await viewer.client.from("workflow_alert_rules")
      .insert({ workflow_id: workflowId, name: "Mine", kind: "no_runs", channel: "email", email_to: ["me@alerts.test"] });
    expect(byViewer.status).toBe(403);
  });
});
