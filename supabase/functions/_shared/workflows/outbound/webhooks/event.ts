/**
 * The `workflow.execution.completed` event a subscriber receives (spec, Events): the body, built
 * once as bytes so that the signature covers exactly what is sent, and the headers.
 */
import { z } from "zod";
import { signatureHeader } from "./signing.ts";
import { traceHeaders } from "../../tracing/trace-context.ts";

/** The one event type delivered. */
export const EVENT_TYPE = "workflow.execution.completed";

/** A delivery claimed for an attempt, as claim_webhook_deliveries hands it over. */
export const claimedDelivery = z.object({
  deliveryId: z.string(),
  /** The attempt's number over the delivery's life. */
  attempt: z.number().int().positive(),
  /** Its place in the current retry schedule (1 for the first send or a redelivery). */
  roundAttempt: z.number().int().positive(),
  /** When the attempt is due: up to a second ahead when its message surfaced early. */
  dueAt: z.string(),
  url: z.string(),
  /** The subscription's signing secret, or null for unsigned deliveries. */
  secret: z.string().nullable(),
  data: z.record(z.string(), z.unknown()),
  links: z.object({ log: z.string(), execution: z.string() }),
  /** The run's trace and root span, for the `traceparent` header (docs/tracing.md). */
  trace: z.object({ traceId: z.string(), spanId: z.string() }).optional(),
});

/** A claimed delivery. */
export type ClaimedDelivery = z.output<typeof claimedDelivery>;

/** The body sent for `delivery` at `timestamp` (Unix ms): {id, type, timestamp, data, links}, as UTF-8 bytes. */
export function eventBody(delivery: ClaimedDelivery, timestamp: number): Uint8Array<ArrayBuffer> {
  return new TextEncoder().encode(JSON.stringify({ id: delivery.deliveryId, type: EVENT_TYPE, timestamp, data: delivery.data, links: delivery.links }));
}

/** What the headers of a signed event name: its delivery id, the secret that signs it, and its type (a completed run's by default). */
export interface SignedEvent {
  deliveryId: string;
  secret: string | null;
  type?: string;
  /** The trace the event belongs to: its `traceparent` names that span (a completed run's root span). */
  trace?: { traceId: string; spanId: string };
}

/**
 * The headers of an attempt (spec, Events; decisions item 7): the event, the attempt's timestamp,
 * the delivery id twice (service-delivery-id and Idempotency-Key, the same on every attempt), and
 * the signature over `body` when the subscription has a secret, and the run's `traceparent` when the
 * event names a run's trace. Alerts are sent with the same
 * headers, under their own type.
 */
export async function eventHeaders(delivery: SignedEvent, timestamp: number, body: Uint8Array): Promise<Record<string, string>> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "user-agent": "orbita-webhooks/1",
    "service-event": delivery.type ?? EVENT_TYPE,
    "service-timestamp": String(timestamp),
    "service-delivery-id": delivery.deliveryId,
    "idempotency-key": delivery.deliveryId,
  };
  if (delivery.secret !== null) headers["service-signature"] = await signatureHeader(delivery.secret, timestamp, body);
  if (delivery.trace) Object.assign(headers, traceHeaders(delivery.trace.traceId, delivery.trace.spanId));
  return headers;
}
