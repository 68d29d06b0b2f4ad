import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebhookReceiver } from "../../../../../../test/stand-ins/webhook-receiver.ts";
import { parseAllowList } from "../addresses.ts";
import { guardedFetch, type OutboundPolicy } from "../guard.ts";
import { attemptDelivery, type OutboundSend } from "./deliver.ts";
import type { ClaimedDelivery } from "./event.ts";

/** Loopback allowed, as the local stacks run the service; names resolve to loopback without DNS. */
const LOCAL: OutboundPolicy = { allow: parseAllowList("127.0.0.0/8,::1"), resolve: async () => ["127.0.0.1"] };
const send: OutboundSend = (url, init) => guardedFetch(url, { ...init, policy: LOCAL });

describe("one delivery attempt", () => {
  let receiver: WebhookReceiver;
  const delivery = (path: string, overrides: Partial<ClaimedDelivery> = {}): ClaimedDelivery => ({
    deliveryId: "6f1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
    attempt: 1,
    roundAttempt: 1,
    dueAt: new Date(Date.now() - 1_000).toISOString(),
    url: receiver.url(path),
    secret: "a-subscription-secret",
    data: { executionId: "e", status: "success" },
    links: { log: "/api/v1/logs/e", execution: "/api/v1/logs/executions/e" },
    ...overrides,
  });

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    receiver.expectSecret("/ok", "a-subscription-secret");
  });

  afterAll(async () => {
    await receiver.stop();
  });

  it("POSTs the signed event once and records it delivered, with the time it was sent", async () => {
    const before = Date.now();
    const record = await attemptDelivery(delivery("/ok"), { timeoutMs: 2_000, send });
    const [arrival] = receiver.arrivals("/ok");
    expect(arrival.signatureValid).toBe(true);
    expect(record).toEqual({
      deliveryId: "6f1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d", attempt: 1, startedAt: new Date(Number(arrival.headers["service-timestamp"])).toISOString(),
      durationMs: expect.any(Number), statusCode: 200, error: null, responseExcerpt: null, outcome: "delivered", retryInMs: null,
    });
    expect(Date.parse(record.startedAt)).toBeGreaterThanOrEqual(before);
  });

  it("keeps the start of a refusal's body, what the receiver said, and nothing of a 2xx", async () => {
    receiver.script("/gone", { status: 410, body: "No such hook: it was deleted on 2026-11-30" });
    receiver.script("/chatty", { status: 500, body: "é".repeat(600) });
    const gone = await attemptDelivery(delivery("/gone"), { timeoutMs: 2_000, send });
    expect(gone).toMatchObject({ statusCode: 410, outcome: "failed", responseExcerpt: "No such hook: it was deleted on 2026-11-30" });
    const chatty = await attemptDelivery(delivery("/chatty"), { timeoutMs: 2_000, send, timing: { random: () => 0.5 } });
    expect(chatty.responseExcerpt).toBe("é".repeat(512));
  });

  it("waits for an attempt that is due a little later, and no longer than two seconds", async () => {
    const waits: number[] = [];
    const sleep = async (ms: number) => void waits.push(ms);
    await attemptDelivery(delivery("/ok", { dueAt: new Date(Date.now() + 700).toISOString() }), { timeoutMs: 2_000, send, sleep });
    await attemptDelivery(delivery("/ok", { dueAt: new Date(Date.now() + 60_000).toISOString() }), { timeoutMs: 2_000, send, sleep });
    expect(waits[0]).toBeGreaterThan(600);
    expect(waits[0]).toBeLessThanOrEqual(700);
    expect(waits[1]).toBe(2_000);
  });

  it("schedules a retry for a 5xx with the schedule's delay, and fails once the retries are used", async () => {
    receiver.answerAlways("/busy", 503);
    const first = await attemptDelivery(delivery("/busy"), { timeoutMs: 2_000, send, timing: { random: () => 0.5 } });
    expect(first).toMatchObject({ statusCode: 503, outcome: "retry", retryInMs: 5_250, error: "The receiver answered HTTP 503" });
    const sixth = await attemptDelivery(delivery("/busy", { attempt: 6, roundAttempt: 6 }), { timeoutMs: 2_000, send });
    expect(sixth).toMatchObject({ attempt: 6, statusCode: 503, outcome: "failed", retryInMs: null, error: "The receiver answered HTTP 503; every retry is used" });
  });

  it("gives up on an answer that does not come within the time limit, and retries it", async () => {
    receiver.script("/slow", "hang");
    const record = await attemptDelivery(delivery("/slow"), { timeoutMs: 300, send });
    expect(record).toMatchObject({ statusCode: null, outcome: "retry", error: expect.stringMatching(/^OUTBOUND_TIMEOUT: /) });
    expect(record.durationMs).toBeGreaterThanOrEqual(290);
    expect(record.durationMs).toBeLessThan(2_000);
  });

  it("does not follow a redirect: it is a final answer", async () => {
    receiver.script("/moving", 308);
    expect(await attemptDelivery(delivery("/moving"), { timeoutMs: 2_000, send })).toMatchObject({ statusCode: 308, outcome: "failed", retryInMs: null });
    expect(receiver.arrivals("/moved")).toEqual([]);
  });

  it("never calls an address the guard refuses, and does not retry it", async () => {
    const record = await attemptDelivery(delivery("/ok", { url: "http://10.0.0.7/hook" }), { timeoutMs: 2_000, send });
    expect(record).toMatchObject({ statusCode: null, outcome: "failed", error: expect.stringMatching(/^OUTBOUND_BLOCKED: 10\.0\.0\.7 is a private address/) });
  });

  it("retries when sending fails on this side for any other reason", async () => {
    const broken: OutboundSend = async () => {
      throw new TypeError("socket pool exhausted");
    };
    expect(await attemptDelivery(delivery("/ok"), { timeoutMs: 2_000, send: broken })).toMatchObject({
      outcome: "retry", statusCode: null, error: "The attempt failed: socket pool exhausted",
    });
  });
});
