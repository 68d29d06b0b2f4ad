/**
 * Delivering fired alerts (the `workflow-alerts` function, worker of the pgmq queue
 * `workflow_alerts`): claim_alert_deliveries hands over each alert with its channel's settings; an
 * e-mail rule's alert goes to its recipients through Resend (portal/mailer.ts, locally the mail
 * catcher), a webhook rule's is POSTed to its subscription's receiver through the outbound guard,
 * signed as completion webhooks are (event type `workflow.alert.fired`). record_alert_deliveries
 * keeps the outcome; an alert not delivered comes back after the visibility timeout, five times at
 * most. The webhook secret is never logged.
 */
import { z } from "zod";
import type { ServiceRpc } from "../../db/service-rpc.ts";
import { escapeHtml } from "../../http/html.ts";
import type { PortalEmail, SendResult } from "../../portal/mailer.ts";
import { workflowEmailSender } from "../workflow-email.ts";
import { eventHeaders } from "../outbound/webhooks/event.ts";
import { judgeAttempt } from "../outbound/webhooks/retry-policy.ts";
import { failedCall, type OutboundSend } from "../outbound/webhooks/deliver.ts";

/** The queue this worker drains. */
export const ALERT_QUEUE = "workflow_alerts";

/** The webhook event type of an alert. */
export const ALERT_EVENT_TYPE = "workflow.alert.fired";

/** What the queue poller (or its pg_cron job) POSTs. */
export const alertWorkerRequestSchema = z.object({
  queue_name: z.literal(ALERT_QUEUE),
  batch_size: z.number().int().min(1).max(100),
  visibility_timeout: z.number().int().min(1).max(43_200),
});

const claimedAlerts = z.object({
  alerts: z.array(z.object({
    messageId: z.number().int(),
    eventId: z.string(),
    attempt: z.number().int(),
    channel: z.enum(["email", "webhook"]),
    emailTo: z.array(z.string()),
    url: z.string().nullable(),
    secret: z.string().nullable(),
    subject: z.string(),
    message: z.string(),
    event: z.record(z.string(), z.unknown()),
  })),
});

/** One claimed alert. */
export type ClaimedAlert = z.infer<typeof claimedAlerts>["alerts"][number];

/** The time an alert's webhook may take, answer included. */
const WEBHOOK_TIMEOUT_MS = 10_000;

/** What the worker runs on. */
export interface AlertDeliveryServices {
  rpc: ServiceRpc;
  sendEmail(email: PortalEmail): Promise<SendResult>;
  post: OutboundSend;
  log(event: string, fields: Record<string, unknown>): void;
}

/** The e-mail of an alert. */
export function alertEmail(alert: ClaimedAlert): PortalEmail {
  return {
    from: workflowEmailSender(),
    to: alert.emailTo,
    subject: alert.subject,
    text: `${alert.message}\n\nFired at ${alert.event.firedAt}.`,
    html: `<p>${escapeHtml(alert.message)}</p><p>Fired at ${escapeHtml(String(alert.event.firedAt))}.</p>`,
    tags: [{ name: "kind", value: "workflow_alert" }],
  };
}

/** POSTs the signed alert event; null when a 2xx came back, else why not. */
async function postAlert(alert: ClaimedAlert, post: OutboundSend): Promise<string | null> {
  if (alert.url === null) return "the rule's webhook subscription has no URL";
  const timestamp = Date.now();
  const body = new TextEncoder().encode(JSON.stringify({ id: alert.eventId, type: ALERT_EVENT_TYPE, timestamp, data: alert.event }));
  const headers = await eventHeaders({ deliveryId: alert.eventId, secret: alert.secret, type: ALERT_EVENT_TYPE }, timestamp, body);
  try {
    const response = await post(alert.url, { method: "POST", headers, body, redirect: "manual", timeoutMs: WEBHOOK_TIMEOUT_MS, maxResponseBytes: Number.MAX_SAFE_INTEGER });
    await response.body?.cancel().catch(() => {});
    return judgeAttempt({ kind: "status", status: response.status }) === "delivered" ? null : `The receiver answered HTTP ${response.status}`;
  } catch (thrown) {
    return failedCall(thrown).error;
  }
}

/** What a drain did. */
export interface AlertDrainSummary {
  alerts: number;
  sent: number;
  failed: number;
}

/** Claims up to `batchSize` alerts, delivers each, and records how it went. */
export async function drainAlerts(services: AlertDeliveryServices, { batchSize, visibilitySeconds }: { batchSize: number; visibilitySeconds: number }): Promise<AlertDrainSummary> {
  const { alerts } = claimedAlerts.parse(await services.rpc("claim_alert_deliveries", { p_batch_size: batchSize, p_visibility_timeout: visibilitySeconds }));
  const results = await Promise.all(alerts.map(async (alert) => {
    let error: string | null;
    if (alert.channel === "email") {
      const sent = await services.sendEmail(alertEmail(alert));
      error = sent.ok ? null : `The e-mail was not sent: ${sent.message}`;
    } else {
      error = await postAlert(alert, services.post);
    }
    if (error !== null) services.log("workflow_alert_not_delivered", { eventId: alert.eventId, attempt: alert.attempt, channel: alert.channel, error });
    return { eventId: alert.eventId, messageId: alert.messageId, ok: error === null, error };
  }));
  if (results.length > 0) await services.rpc("record_alert_deliveries", { p_results: results });
  const sent = results.filter((result) => result.ok).length;
  return { alerts: alerts.length, sent, failed: results.length - sent };
}
