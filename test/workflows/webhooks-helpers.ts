/**
 * Helpers of the webhook tests: subscriptions made through the data API as an editor would, and
 * reading deliveries and attempts back as a member. The test stack runs the retry schedule at
 * 1/100 of its length and a 3 s attempt time limit (test/fixtures/functions.env).
 */
import type { TestUser } from "../helpers/clients.ts";

/** The schedule's scale in the test stack (WEBHOOK_RETRY_DELAY_SCALE in test/fixtures/functions.env). */
export const TEST_RETRY_SCALE = 0.01;
/** The attempt time limit in the test stack (WEBHOOK_DELIVERY_TIMEOUT_MS). */
export const TEST_TIMEOUT_MS = 3_000;

/** A subscription row as members read it. */
export interface Subscription {
  id: string;
  workspace_id: string;
  workflow_id: string;
  url: string;
  secret: string | null;
  has_secret: boolean;
  include_final_output: boolean;
  include_trace_spans: boolean;
  include_rate_limits: boolean;
  include_usage_data: boolean;
  level_filter: string[];
  trigger_filter: string[];
  active: boolean;
  disable_after_dead_deliveries: number;
  disable_after_dead_minutes: number;
  consecutive_dead_deliveries: number;
  dead_since: string | null;
  disabled_at: string | null;
  disabled_reason: string | null;
}

/** A delivery row as members read it. */
export interface Delivery {
  id: string;
  subscription_id: string;
  execution_id: string;
  status: "pending" | "delivered" | "failed";
  attempts: number;
  round_attempts: number;
  redeliveries: number;
  last_status_code: number | null;
  last_error: string | null;
  last_response_excerpt: string | null;
  delivered_at: string | null;
  failed_at: string | null;
  next_attempt_at: string | null;
}

/** An attempt row as members read it. */
export interface Attempt {
  delivery_id: string;
  attempt: number;
  started_at: string;
  duration_ms: number | null;
  status_code: number | null;
  error: string | null;
  response_excerpt: string | null;
  outcome: "delivered" | "retry" | "failed" | "interrupted";
  next_attempt_at: string | null;
}

/** Subscribes `url` to the workflow's completions as `editor`. */
export async function subscribe(editor: TestUser, workflowId: string, url: string, fields: Partial<Subscription> = {}): Promise<Subscription> {
  const { data, error } = await editor.client.from("webhook_subscriptions").insert({ workflow_id: workflowId, url, ...fields }).select().single<Subscription>();
  if (error) throw error;
  return data;
}

/** The deliveries of an execution, as `member` reads them. */
export async function deliveriesOf(member: TestUser, executionId: string): Promise<Delivery[]> {
  const { data, error } = await member.client.from("webhook_deliveries").select("*").eq("execution_id", executionId).order("created_at");
  if (error) throw error;
  return data as Delivery[];
}

/** The attempts of a delivery in order, as `member` reads them. */
export async function attemptsOf(member: TestUser, deliveryId: string): Promise<Attempt[]> {
  const { data, error } = await member.client.from("webhook_delivery_attempts").select("*").eq("delivery_id", deliveryId).order("attempt");
  if (error) throw error;
  return data as Attempt[];
}

/** Polls `check` until it returns a value that is not undefined; fails with `what` after `timeoutMs`. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
}

/** The delivery of an execution once it is no longer pending. */
export async function settledDelivery(member: TestUser, executionId: string, timeoutMs = 30_000): Promise<Delivery> {
  return await eventually(`the delivery of ${executionId} to settle`, async () => {
    const [delivery] = await deliveriesOf(member, executionId);
    return delivery && delivery.status !== "pending" ? delivery : undefined;
  }, timeoutMs);
}
