/**
 * Completion webhooks end to end: subscriptions managed through the data API under row-level
 * security, runs recorded through the lifecycle functions, the real `webhook-deliveries` worker
 * (driven by the platform's queue poller) delivering to a local receiver that checks every
 * signature byte for byte. What is sent (body, headers, include flags, filters), who may see and
 * change what, and redelivery. Retries and final failures are in webhooks-retries.test.ts.
 */
import type { Sql } from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schemaViolations } from "../gamification/openapi.ts";
import { createTestUser, type TestUser } from "../helpers/clients.ts";
import { WebhookReceiver } from "../stand-ins/webhook-receiver.ts";
import { createWorkspace, type TestWorkspace } from "./factories.ts";
import { deployedWorkflow, liftLimits, openDatabase, recordRuns } from "./logs-helpers.ts";
import { attemptsOf, deliveriesOf, eventually, settledDelivery, type Subscription, subscribe } from "./webhooks-helpers.ts";

const SECRET = "whsec_orbita_test_secret_0123456789";

describe("completion webhooks", () => {
  let sql: Sql;
  let receiver: WebhookReceiver;
  let workspace: TestWorkspace;
  let editor: TestUser;
  let viewer: TestUser;
  let stranger: TestUser;

  beforeAll(async () => {
    sql = openDatabase();
    receiver = await WebhookReceiver.start();
    workspace = await createWorkspace("Webhooks");
    ({ editor, viewer } = workspace.members);
    stranger = await createTestUser();
    await liftLimits(workspace.id);
  });

  afterAll(async () => {
    await receiver.stop();
    await sql.end();
  });

  describe("subscriptions", () => {
    let workflowId: string;

    beforeAll(async () => {
      workflowId = await deployedWorkflow(workspace, "Subscribed");
    });

    it("keeps the secret write-only: clients see only whether one is set", async () => {
      const created = await subscribe(editor, workflowId, receiver.url("/managed"), { secret: SECRET });
      expect(created).toMatchObject({ workspace_id: workspace.id, workflow_id: workflowId, secret: null, has_secret: true, active: true,
        include_final_output: false, include_trace_spans: false, include_rate_limits: false, include_usage_data: false,
        level_filter: ["info", "error"], trigger_filter: ["api", "webhook", "schedule", "manual", "chat"] });
      const { data: seen } = await viewer.client.from("webhook_subscriptions").select("*").eq("id", created.id).single<Subscription>();
      expect(seen).toMatchObject({ secret: null, has_secret: true });

      const renamed = await editor.client.from("webhook_subscriptions").update({ url: receiver.url("/managed-2"), has_secret: false }).eq("id", created.id).select().single<Subscription>();
      expect(renamed.data).toMatchObject({ url: receiver.url("/managed-2"), secret: null, has_secret: true });
      const cleared = await editor.client.from("webhook_subscriptions").update({ secret: "" }).eq("id", created.id).select().single<Subscription>();
      expect(cleared.data).toMatchObject({ secret: null, has_secret: false });
      const forged = await editor.client.from("webhook_subscriptions").update({ has_secret: true }).eq("id", created.id).select().single<Subscription>();
      expect(forged.data?.has_secret).toBe(false);
      const short = await editor.client.from("webhook_subscriptions").update({ secret: "short" }).eq("id", created.id);
      expect(short.status).toBe(400);
      expect(short.error?.message).toBe("A webhook secret is 8 to 256 characters without control characters");
    });

    it("takes only absolute http(s) URLs without credentials", async () => {
      for (const url of ["ftp://example.com/hook", "https://user:password@example.com/hook", "example.com/hook", "http://exa mple.com/", "http:///nohost", "javascript:alert(1)", `https://example.com/${"a".repeat(2048)}`]) {
        const { status, error } = await editor.client.from("webhook_subscriptions").insert({ workflow_id: workflowId, url });
        expect(status, url).toBe(400);
        expect(error?.code).toBe("23514");
      }
      expect((await editor.client.from("webhook_subscriptions").insert({ workflow_id: workflowId, url: "HTTPS://hooks.example.com:8443/a/b?c=d#e" })).error).toBeNull();
    });

    it("lets editors write and members read; nobody else sees them", async () => {
      const byViewer = await viewer.client.from("webhook_subscriptions").insert({ workflow_id: workflowId, url: receiver.url("/viewer") });
      expect(byViewer.status).toBe(403);
      const byStranger = await stranger.client.from("webhook_subscriptions").insert({ workflow_id: workflowId, url: receiver.url("/stranger") });
      expect(byStranger.status).toBe(403);
      expect(byStranger.error?.code).toBe("42501");
      const own = await subscribe(editor, workflowId, receiver.url("/rls"));
      const viewerUpdate = await viewer.client.from("webhook_subscriptions").update({ active: false }).eq("id", own.id).select();
      expect(viewerUpdate.data).toEqual([]);
      const strangerRead = await stranger.client.from("webhook_subscriptions").select("id").eq("id", own.id);
      expect(strangerRead.data).toEqual([]);
      const removed = await editor.client.from("webhook_subscriptions").delete().eq("id", own.id).select("id");
      expect(removed.data).toEqual([{ id: own.id }]);
    });
  });

  describe("deliveries", () => {
    it("POSTs the spec's event with its headers, signed over the exact bytes sent", async () => {
      const workflowId = await deployedWorkflow(workspace, "Announced");
      receiver.expectSecret("/signed", SECRET);
      await subscribe(editor, workflowId, receiver.url("/signed"), { secret: SECRET });
      const [executionId] = await recordRuns(sql, [{ workflowId, trigger: "webhook", durationMs: 12, output: { total: 3 }, files: [{ id: "f", name: "a.csv" }] }]);

      const [arrival] = await receiver.waitFor("/signed", (arrivals) => arrivals.length >= 1);
      const delivery = await settledDelivery(viewer, executionId);
      expect(delivery).toMatchObject({ status: "delivered", attempts: 1, last_status_code: 200, last_error: null });
      expect(arrival.signatureValid).toBe(true);
      expect(arrival.headers).toMatchObject({
        "content-type": "application/json",
        "service-event": "workflow.execution.completed",
        "service-timestamp": expect.stringMatching(/^\d{13}$/),
        "service-delivery-id": delivery.id,
        "idempotency-key": delivery.id,
        "service-signature": expect.stringMatching(/^t=\d{13},v1=[0-9a-f]{64}$/),
      });
      const { data: run } = await viewer.client.from("workflow_executions").select("started_at, ended_at").eq("id", executionId).single<{ started_at: string; ended_at: string }>();
      expect(arrival.json).toEqual({
        id: delivery.id,
        type: "workflow.execution.completed",
        timestamp: Number(arrival.headers["service-timestamp"]),
        data: {
          workflowId, executionId, status: "success", level: "info", trigger: "webhook",
          startedAt: expect.any(String), endedAt: expect.any(String), totalDurationMs: 12,
          cost: { total: 0.001, base: 0.001, input: 0, output: 0, tokens: { prompt: 0, completion: 0, total: 0 }, models: {} },
          files: [{ id: "f", name: "a.csv" }], error: null,
        },
        links: { log: `/api/v1/logs/${executionId}`, execution: `/api/v1/logs/executions/${executionId}` },
      });
      const data = (arrival.json as { data: { startedAt: string; endedAt: string } }).data;
      expect([Date.parse(data.startedAt), Date.parse(data.endedAt)]).toEqual([Date.parse(run?.started_at ?? ""), Date.parse(run?.ended_at ?? "")]);
      expect(await attemptsOf(viewer, delivery.id)).toEqual([expect.objectContaining({ attempt: 1, status_code: 200, outcome: "delivered", error: null, next_attempt_at: null })]);
      // A receiver that re-serialises the JSON instead of checking the raw bytes would not match.
      expect(JSON.stringify(arrival.json)).toBe(arrival.body.toString("utf8"));
      expect(schemaViolations("WebhookEvent", arrival.json)).toEqual([]);
    });

    it("adds the final output, trace spans, rate limits and usage when asked, and says error for failed runs", async () => {
      const workflowId = await deployedWorkflow(workspace, "Verbose");
      await subscribe(editor, workflowId, receiver.url("/verbose"), { include_final_output: true, include_trace_spans: true, include_rate_limits: true, include_usage_data: true });
      const spans = [{ blockId: "done", status: "error", durationMs: 4 }];
      const [executionId] = await recordRuns(sql, [{ workflowId, status: "failed", output: { partial: true }, traceSpans: spans }]);
      const [arrival] = await receiver.waitFor("/verbose", (arrivals) => arrivals.length >= 1);
      expect(arrival.headers).not.toHaveProperty("service-signature");
      const data = (arrival.json as { data: Record<string, unknown> }).data;
      expect(data).toMatchObject({
        executionId, status: "error", level: "error", traceSpans: spans,
        // What the executor held when the run failed is not its answer; error says why it failed.
        finalOutput: null, error: { code: "BLOCK_FAILED", message: "It broke", blockId: "done", blockName: "Done" },
        rateLimits: { sync: { limit: 100_000, remaining: expect.any(Number), resetAt: expect.any(String) }, async: { limit: 100_000, remaining: expect.any(Number), resetAt: expect.any(String) } },
        usage: { currentPeriodCost: expect.any(Number), limit: 100_000, plan: "free", isExceeded: false },
      });
      expect(Object.keys(data.rateLimits as object).sort()).toEqual(["async", "sync"]);
      expect(schemaViolations("WebhookEvent", arrival.json)).toEqual([]);
    });

    it("sends each run to every active subscription its level and trigger filters match, one delivery each", async () => {
      const workflowId = await deployedWorkflow(workspace, "Filtered");
      await Promise.all([
        subscribe(editor, workflowId, receiver.url("/errors"), { level_filter: ["error"] }),
        subscribe(editor, workflowId, receiver.url("/schedules"), { trigger_filter: ["schedule"] }),
        subscribe(editor, workflowId, receiver.url("/off"), { active: false }),
        subscribe(editor, workflowId, receiver.url("/all")),
      ]);
      const [webhookRun, scheduleFailure, chatRun] = await recordRuns(sql, [
        { workflowId, trigger: "webhook" },
        { workflowId, trigger: "schedule", status: "failed" },
        { workflowId, trigger: "chat", status: "cancelled" },
      ]);
      const all = await receiver.waitFor("/all", (arrivals) => arrivals.length >= 3);
      await receiver.waitFor("/errors", (arrivals) => arrivals.length >= 1);
      await receiver.waitFor("/schedules", (arrivals) => arrivals.length >= 1);
      const executionOf = (path: string) => receiver.arrivals(path).map((arrival) => (arrival.json as { data: { executionId: string } }).data.executionId);
      expect(new Set(executionOf("/all"))).toEqual(new Set([webhookRun, scheduleFailure, chatRun]));
      expect(all.find((arrival) => (arrival.json as { data: { executionId: string } }).data.executionId === chatRun)?.json).toMatchObject({ data: { status: "cancelled", level: "info" } });
      expect(executionOf("/errors")).toEqual([scheduleFailure]);
      expect(executionOf("/schedules")).toEqual([scheduleFailure]);
      expect(receiver.arrivals("/off")).toEqual([]);
      expect(await deliveriesOf(viewer, scheduleFailure)).toHaveLength(3);
      expect(new Set(receiver.arrivals().map((arrival) => arrival.deliveryId)).size).toBe(receiver.arrivals().length);
    });

    it("announces runs closed by the sweeper too (whoever ends a run ends it the same way)", async () => {
      const workflowId = await deployedWorkflow(workspace, "Abandoned");
      await subscribe(editor, workflowId, receiver.url("/swept"));
      const [executionId] = await sql.begin(async (tx) => {
        await tx`select set_config('role', 'service_role', true), set_config('request.jwt.claims', '{"role": "service_role"}', true)`;
        return await tx<{ id: string }[]>`select (public.admit_workflow_run(${workflowId}::uuid, 'webhook', 'sync', p_lease_seconds => 1) ->> 'executionId') as id`;
      }).then((rows) => rows.map((row) => row.id));
      await sql`select workflows_private.sweep_workflow_runs(now() + interval '1 minute')`;
      const [arrival] = await receiver.waitFor("/swept", (arrivals) => arrivals.length >= 1);
      expect(arrival.json).toMatchObject({ data: { executionId, status: "error", level: "error" } });
    });

    it("lets members read deliveries and attempts, and nobody else", async () => {
      const workflowId = await deployedWorkflow(workspace, "Private");
      await subscribe(editor, workflowId, receiver.url("/private"));
      const [executionId] = await recordRuns(sql, [{ workflowId }]);
      const delivery = await settledDelivery(viewer, executionId);
      expect(await deliveriesOf(stranger, executionId)).toEqual([]);
      expect(await attemptsOf(stranger, delivery.id)).toEqual([]);
      expect(await attemptsOf(viewer, delivery.id)).toHaveLength(1);
    });
  });

  describe("redelivery", () => {
    it("sends a finished delivery again with the same id, for editors only", async () => {
      const workflowId = await deployedWorkflow(workspace, "Replayed");
      await subscribe(editor, workflowId, receiver.url("/replay"));
      const [executionId] = await recordRuns(sql, [{ workflowId }]);
      const first = await settledDelivery(viewer, executionId);

      const byViewer = await viewer.client.rpc("redeliver_webhook", { p_delivery_id: first.id });
      expect(byViewer.status).toBe(403);
      const byStranger = await stranger.client.rpc("redeliver_webhook", { p_delivery_id: first.id });
      expect(byStranger.status).toBe(404);
      const replayed = await editor.client.rpc("redeliver_webhook", { p_delivery_id: first.id });
      expect(replayed.error).toBeNull();
      expect(replayed.data).toMatchObject({ id: first.id, status: "pending", redeliveries: 1, round_attempts: 0 });

      const arrivals = await receiver.waitFor("/replay", (all) => all.length >= 2);
      expect(arrivals.map((arrival) => arrival.deliveryId)).toEqual([first.id, first.id]);
      expect(arrivals[1].headers["idempotency-key"]).toBe(first.id);
      expect(Number(arrivals[1].headers["service-timestamp"])).toBeGreaterThan(Number(arrivals[0].headers["service-timestamp"]));
      const settled = await eventually("the redelivery to be recorded", async () => {
        const [delivery] = await deliveriesOf(viewer, executionId);
        return delivery.status === "delivered" && delivery.attempts === 2 ? delivery : undefined;
      });
      expect(settled.redeliveries).toBe(1);
      expect((await attemptsOf(viewer, first.id)).map((attempt) => [attempt.attempt, attempt.outcome])).toEqual([[1, "delivered"], [2, "delivered"]]);
    });

    it("refuses to redeliver a delivery still being attempted", async () => {
      const workflowId = await deployedWorkflow(workspace, "Busy receiver");
      receiver.script("/busy", "hang");
      await subscribe(editor, workflowId, receiver.url("/busy"));
      const [executionId] = await recordRuns(sql, [{ workflowId }]);
      await receiver.waitFor("/busy", (arrivals) => arrivals.length >= 1);
      const [pending] = await deliveriesOf(viewer, executionId);
      expect(pending.status).toBe("pending");
      const refused = await editor.client.rpc("redeliver_webhook", { p_delivery_id: pending.id });
      expect(refused.status).toBe(409);
      expect(refused.error?.message).toMatch(/still being attempted/);
    });

    it("redelivers every failed delivery of a subscription once the receiver takes them", async () => {
      const workflowId = await deployedWorkflow(workspace, "Refused");
      receiver.answerAlways("/refusing", 400);
      const subscription = await subscribe(editor, workflowId, receiver.url("/refusing"));
      const executions = await recordRuns(sql, [{ workflowId }, { workflowId }]);
      const failed = await Promise.all(executions.map((executionId) => settledDelivery(viewer, executionId)));
      expect(failed.map((delivery) => [delivery.status, delivery.attempts, delivery.last_status_code])).toEqual([["failed", 1, 400], ["failed", 1, 400]]);

      receiver.answerAlways("/refusing", 200);
      const queued = await editor.client.rpc("redeliver_failed_webhooks", { p_subscription_id: subscription.id });
      expect(queued.data).toBe(2);
      const arrivals = await receiver.waitFor("/refusing", (all) => all.length >= 4);
      expect(arrivals.slice(2).map((arrival) => arrival.deliveryId).sort()).toEqual(failed.map((delivery) => delivery.id).sort());
      for (const executionId of executions) {
        await eventually("the redelivery", async () => ((await deliveriesOf(viewer, executionId))[0].status === "delivered" ? true : undefined));
      }
    });
  });
});
