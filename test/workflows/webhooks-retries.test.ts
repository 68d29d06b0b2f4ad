/**
 * The retry schedule and the final-status rules of completion webhooks, end to end through the
 * real worker and a receiver that answers 500, 429, slowly, not at all, or 4xx on demand and
 * records when each attempt arrived. The test stack runs the schedule at 1/100 (5 s → 50 ms …
 * 10 min → 6 s) and a 3 s time limit; the exact delays with their jitter bounds are unit-tested in
 * retry-policy.test.ts. Here no retry may be due, or arrive, sooner than its delay after the attempt
 * before it; how much later it comes depends on how busy the machine is, so only the bench times it.
 */
import type { Sql } from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestUser } from "../helpers/clients.ts";
import { RETRY_DELAYS_MS } from "../../supabase/functions/_shared/workflows/outbound/webhooks/retry-policy.ts";
import { type Arrival, WebhookReceiver } from "../stand-ins/webhook-receiver.ts";
import { createWorkspace, type TestWorkspace } from "./factories.ts";
import { deployedWorkflow, liftLimits, openDatabase, recordRuns } from "./logs-helpers.ts";
import { type Attempt, attemptsOf, deliveriesOf, eventually, settledDelivery, subscribe, TEST_RETRY_SCALE, TEST_TIMEOUT_MS } from "./webhooks-helpers.ts";

/** The scaled delay after the n-th failed attempt (1-based). */
const delay = (n: number) => RETRY_DELAYS_MS[n - 1] * TEST_RETRY_SCALE;

/**
 * Checks each recorded retry was scheduled no sooner than its delay after its attempt ended. The
 * due time counts from when the attempt was recorded, a moment after it ended, so how much later it
 * may be depends on the machine; the delays and their jitter are pinned in retry-policy.test.ts.
 */
function expectScheduled(attempts: Attempt[]): void {
  for (const [index, attempt] of attempts.entries()) {
    if (attempt.outcome !== "retry") continue;
    const ended = Date.parse(attempt.started_at) + (attempt.duration_ms ?? 0);
    const wait = Date.parse(attempt.next_attempt_at ?? "") - ended;
    expect(wait, `wait after attempt ${attempt.attempt}`).toBeGreaterThanOrEqual(delay(index + 1) - 1);
  }
}

/**
 * Checks no attempt arrived before its retry was due: each arrival is at least the schedule's delay
 * after the one before it, and not before the due time its predecessor recorded.
 */
function expectSpacing(arrivals: Arrival[], attempts: Attempt[]): void {
  for (let index = 1; index < arrivals.length; index += 1) {
    const gap = arrivals[index].at - arrivals[index - 1].at;
    expect(gap, `gap before attempt ${index + 1}`).toBeGreaterThanOrEqual(delay(index));
    const due = Date.parse(attempts[index - 1].next_attempt_at ?? "");
    // The receiver's clock and the database's are this machine's one clock; 5 ms covers their rounding.
    expect(arrivals[index].at, `arrival of attempt ${index + 1}`).toBeGreaterThanOrEqual(due - 5);
  }
}

describe("webhook retries", () => {
  let sql: Sql;
  let receiver: WebhookReceiver;
  let workspace: TestWorkspace;
  let editor: TestUser;
  let viewer: TestUser;

  /** A workflow subscribed to `path`, and one finished run of it; returns the execution id. */
  async function runAnnouncedTo(path: string, name: string): Promise<string> {
    const workflowId = await deployedWorkflow(workspace, name);
    await subscribe(editor, workflowId, receiver.url(path));
    const [executionId] = await recordRuns(sql, [{ workflowId }]);
    return executionId;
  }

  beforeAll(async () => {
    sql = openDatabase();
    receiver = await WebhookReceiver.start();
    workspace = await createWorkspace("Webhook retries");
    ({ editor, viewer } = workspace.members);
    await liftLimits(workspace.id);
  });

  afterAll(async () => {
    await receiver.stop();
    await sql.end();
  });

  it("retries 500, 429, a reset connection and a timeout on the schedule, then delivers, recording every attempt", async () => {
    receiver.script("/flaky", 500, 429, "reset", { status: 200, delayMs: TEST_TIMEOUT_MS + 1_500 });
    const executionId = await runAnnouncedTo("/flaky", "Flaky");
    const delivery = await settledDelivery(viewer, executionId, 40_000);
    expect(delivery).toMatchObject({ status: "delivered", attempts: 5, last_status_code: 200, last_error: null });

    const arrivals = receiver.arrivals("/flaky");
    expect(arrivals.map((arrival) => arrival.deliveryId)).toEqual(Array(5).fill(delivery.id));
    const attempts = await attemptsOf(viewer, delivery.id);
    expect(attempts.map((attempt) => [attempt.attempt, attempt.outcome, attempt.status_code])).toEqual([
      [1, "retry", 500], [2, "retry", 429], [3, "retry", null], [4, "retry", null], [5, "delivered", 200],
    ]);
    expect(attempts[0].error).toBe("The receiver answered HTTP 500");
    expect(attempts[1].error).toBe("The receiver answered HTTP 429");
    expect(attempts[2].error).toMatch(/^OUTBOUND_(CONNECTION|PROTOCOL): /);
    expect(attempts[3].error).toMatch(/^OUTBOUND_TIMEOUT: /);
    // Given up at the limit, before the receiver's late answer (limit + 1.5 s) could come.
    expect(attempts[3].duration_ms).toBeGreaterThanOrEqual(TEST_TIMEOUT_MS - 50);
    expectScheduled(attempts);
    expectSpacing(arrivals, attempts);
    // Each attempt is signed anew: a fresh timestamp, the same delivery id.
    expect(new Set(arrivals.map((arrival) => arrival.headers["service-timestamp"])).size).toBe(5);
  }, 60_000);

  it("gives up after the first attempt and five retries (5 s, 15 s, 1 min, 3 min, 10 min, scaled), and records why", async () => {
    receiver.answerAlways("/down", 503);
    const executionId = await runAnnouncedTo("/down", "Never answered");
    const delivery = await settledDelivery(viewer, executionId, 60_000);
    expect(delivery).toMatchObject({ status: "failed", attempts: 6, last_status_code: 503, next_attempt_at: null });
    expect(delivery.last_error).toBe("The receiver answered HTTP 503; every retry is used");
    const attempts = await attemptsOf(viewer, delivery.id);
    expect(attempts.map((attempt) => attempt.outcome)).toEqual(["retry", "retry", "retry", "retry", "retry", "failed"]);
    expect(attempts[5].next_attempt_at).toBeNull();
    expectScheduled(attempts);
    const arrivals = receiver.arrivals("/down");
    expect(arrivals).toHaveLength(6);
    expectSpacing(arrivals, attempts);
    // Nothing more arrives once the delivery has failed.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(receiver.arrivals("/down")).toHaveLength(6);
  }, 90_000);

  it.each([[400], [401], [404], [410], [422], [302], [301]])("takes HTTP %i as final: one attempt, failed, the redirect not followed", async (status) => {
    receiver.answerAlways(`/final-${status}`, status);
    const executionId = await runAnnouncedTo(`/final-${status}`, `Final ${status}`);
    const delivery = await settledDelivery(viewer, executionId);
    expect(delivery).toMatchObject({ status: "failed", attempts: 1, last_status_code: status, last_error: `The receiver answered HTTP ${status}` });
    expect((await attemptsOf(viewer, delivery.id)).map((attempt) => attempt.outcome)).toEqual(["failed"]);
    expect(receiver.arrivals("/moved")).toEqual([]);
  });

  it("retries a receiver that refuses connections, and delivers once it is back", async () => {
    const down = await WebhookReceiver.start();
    const url = down.url("/later");
    await down.stop();
    const workflowId = await deployedWorkflow(workspace, "Receiver down");
    await subscribe(editor, workflowId, url);
    const [executionId] = await recordRuns(sql, [{ workflowId }]);
    // Down until an attempt has been refused and recorded (however slow the machine), then back
    // while retries remain (five, the last 10 min scaled to 6 s after the fifth).
    await eventually(`a refused attempt of the delivery of ${executionId}`, async () => {
      const [delivery] = await deliveriesOf(viewer, executionId);
      return delivery && (await attemptsOf(viewer, delivery.id)).length > 0 ? delivery : undefined;
    });
    await down.restart();
    const delivery = await settledDelivery(viewer, executionId, 30_000);
    await down.stop();
    expect(delivery.status).toBe("delivered");
    const attempts = await attemptsOf(viewer, delivery.id);
    expect(attempts.length).toBeGreaterThanOrEqual(2);
    expect(attempts.slice(0, -1).every((attempt) => attempt.outcome === "retry" && /^OUTBOUND_CONNECTION: /.test(attempt.error ?? ""))).toBe(true);
    expect(down.arrivals("/later").map((arrival) => arrival.deliveryId)).toEqual([delivery.id]);
  }, 40_000);

  it("does not call addresses the outbound guard refuses, and does not retry them", async () => {
    const workflowId = await deployedWorkflow(workspace, "Metadata");
    await subscribe(editor, workflowId, "http://169.254.169.254/latest/meta-data/");
    const [executionId] = await recordRuns(sql, [{ workflowId }]);
    const delivery = await settledDelivery(viewer, executionId);
    expect(delivery).toMatchObject({ status: "failed", attempts: 1, last_status_code: null });
    expect(delivery.last_error).toMatch(/^OUTBOUND_BLOCKED: 169\.254\.169\.254 is a link-local/);
  });
});
