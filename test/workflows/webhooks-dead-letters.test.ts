/**
 * Dead letters end to end (issue 32, item 5), through the real delivery worker and a scripted
 * receiver: a delivery refused for good keeps what the receiver said; members list dead letters
 * through the data API; a subscription whose deliveries keep dying is switched off with the
 * reason and its owner e-mailed; an editor switches it back on and replays the dead letters of a time range, which
 * arrive under their own ids.
 */
import type { Sql } from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { latestMail } from "../helpers/auth.ts";
import type { TestUser } from "../helpers/clients.ts";
import { WebhookReceiver } from "../stand-ins/webhook-receiver.ts";
import { createWorkspace, type TestWorkspace } from "./factories.ts";
import { deployedWorkflow, liftLimits, openDatabase, recordRuns } from "./logs-helpers.ts";
import { type Delivery, eventually, settledDelivery, subscribe, type Subscription } from "./webhooks-helpers.ts";

describe("dead letters", () => {
  let sql: Sql;
  let receiver: WebhookReceiver;
  let workspace: TestWorkspace;
  let editor: TestUser;
  let viewer: TestUser;

  beforeAll(async () => {
    sql = openDatabase();
    receiver = await WebhookReceiver.start();
    workspace = await createWorkspace("Dead letters");
    ({ editor, viewer } = workspace.members);
    await liftLimits(workspace.id);
  });

  afterAll(async () => {
    await receiver.stop();
    await sql.end();
  });

  async function subscriptionOf(id: string): Promise<Subscription> {
    const { data, error } = await viewer.client.from("webhook_subscriptions").select("*").eq("id", id).single<Subscription>();
    if (error) throw error;
    return data;
  }

  it("keeps what the receiver said, switches off a subscription whose deliveries keep dying, and replays them once it is back", async () => {
    receiver.script("/gone", { status: 410, body: "This hook was deleted" }, { status: 404, body: "Still no such hook" });
    const workflowId = await deployedWorkflow(workspace, "Announced to a deleted hook");
    const subscription = await subscribe(editor, workflowId, receiver.url("/gone"), { disable_after_dead_deliveries: 2, disable_after_dead_minutes: 0 });

    const [first] = await recordRuns(sql, [{ workflowId }]);
    const dead = await settledDelivery(viewer, first);
    expect(dead).toMatchObject({ status: "failed", attempts: 1, last_status_code: 410, last_response_excerpt: "This hook was deleted" });
    expect(dead.failed_at).not.toBeNull();
    expect(await subscriptionOf(subscription.id)).toMatchObject({ active: true, consecutive_dead_deliveries: 1 });

    const [second] = await recordRuns(sql, [{ workflowId }]);
    const secondDead = await settledDelivery(viewer, second);
    expect(secondDead.last_response_excerpt).toBe("Still no such hook");
    const switchedOff = await eventually("the subscription to be switched off", async () => {
      const current = await subscriptionOf(subscription.id);
      return current.active ? undefined : current;
    });
    expect(switchedOff.consecutive_dead_deliveries).toBe(2);
    expect(switchedOff.disabled_reason).toBe(`Switched off after 2 dead deliveries in a row; the last (${secondDead.id}) failed: The receiver answered HTTP 404`);
    // Its owner, the editor who made it, is told by e-mail (through the alerts worker).
    const notice = await latestMail(editor.email);
    expect(notice.subject).toBe(`[Orbita] Webhook switched off: ${receiver.url("/gone")}`);
    expect(notice.html).toContain(switchedOff.disabled_reason);

    // The dead letters, as a member lists them.
    const { data: letters, error } = await viewer.client.from("webhook_deliveries").select("*")
      .eq("subscription_id", subscription.id).eq("status", "failed").order("failed_at");
    expect(error).toBeNull();
    expect((letters as Delivery[]).map((letter) => [letter.id, letter.last_status_code, letter.last_response_excerpt])).toEqual([
      [dead.id, 410, "This hook was deleted"], [secondDead.id, 404, "Still no such hook"],
    ]);

    // The receiver is back: switch the subscription on and replay only the second run's letter.
    const { error: switchError } = await editor.client.from("webhook_subscriptions").update({ active: true }).eq("id", subscription.id);
    expect(switchError).toBeNull();
    expect(await subscriptionOf(subscription.id)).toMatchObject({ active: true, consecutive_dead_deliveries: 0, disabled_at: null, disabled_reason: null });
    const [{ created_at: secondEnded }] = await sql<{ created_at: Date }[]>`select created_at from public.webhook_deliveries where id = ${secondDead.id}`;
    const viewerReplay = await viewer.client.rpc("redeliver_failed_webhooks", { p_subscription_id: subscription.id });
    expect(viewerReplay.error?.code).toBe("42501");
    const reversed = await editor.client.rpc("redeliver_failed_webhooks", {
      p_subscription_id: subscription.id, p_since: secondEnded.toISOString(), p_until: new Date(secondEnded.getTime() - 1).toISOString(),
    });
    expect(reversed.status).toBe(400);
    const replay = await editor.client.rpc("redeliver_failed_webhooks", { p_subscription_id: subscription.id, p_since: secondEnded.toISOString() });
    expect(replay).toMatchObject({ error: null, data: 1 });

    const redelivered = await settledDelivery(viewer, second);
    expect(redelivered).toMatchObject({ id: secondDead.id, status: "delivered", redeliveries: 1, failed_at: null });
    expect(receiver.arrivals("/gone").map((arrival) => arrival.deliveryId)).toEqual([dead.id, secondDead.id, secondDead.id]);
    const [firstNow] = await sql<{ status: string }[]>`select status::text from public.webhook_deliveries where id = ${dead.id}`;
    expect(firstNow.status).toBe("failed");
  }, 60_000);
});
