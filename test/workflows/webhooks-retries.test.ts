/**
 * The retry schedule and the final-status rules of completion webhooks, end to end through the
 * real worker and a receiver that answers 500, 429, slowly, not at all, or 4xx on demand and
 * records when each attempt arrived. The test stack runs the schedule at 1/100 (5 s → 50 ms …
 * 10 min → 6 s) and a 3 s time limit; the exact delays with their jitter bounds are unit-tested in
 * retry-policy.test.ts. Here every recorded wait must lie within [delay, delay + 10%] of the
 * attempt's end, and arrivals must be at least the delay apart.
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
/** Room for the machine: polling, claiming and recording between one attempt's end and the next. */
const SLACK_MS = 2_500;

/** Checks each recorded retry was scheduled within [delay, delay + 10%] after its attempt ended. */
function expectScheduled(attempts: Attempt[]): void {
  for (const [index, attempt] of attempts.entries()) {
    if (attempt.outcome !== "retry") continue;
    const ended = Date.parse(attempt.started_at) + (attempt.duration_ms ?? 0);
    const wait = Date.parse(attempt.next_attempt_at ?? "") - ended;
    const base = delay(index + 1);
    expect(wait, `wait after attempt ${attempt.attempt}`).toBeGreaterThanOrEqual(base - 1);
    // The record is written a few milliseconds after the attempt ends, and the wait counts from there.
    expect(wait, `wait after attempt ${attempt.attempt}`).toBeLessThanOrEqual(base * 1.1 + 250);
  }
}

/** Checks arrivals are at least the schedule's delays apart, and not far beyond them. */
function expectSpacing(arrivals: Arrival[], attempts: Attempt[]): void {
  for (let index = 1; index < arrivals.length; index += 1) {
    const gap = arrivals[index].at - arrivals[index - 1].at;
    const previous = attempts[index - 1];
    expect(gap, `gap before attempt ${index + 1}`).toBeGreaterThanOrEqual(delay(index));
    expect(gap, `gap before attempt ${index + 1}`).toBeLessThanOrEqual((previous.duration_ms ?? 0) + delay(index) * 1.1 + SLACK_MS);
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
    expect(attempts[3].duration_ms).toBeGreaterThanOrEqual(TEST_TIMEOUT_MS - 50);
    expect(attempts[3].duration_ms).toBeLessThan(TEST_TIMEOUT_MS + 1_000);
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
