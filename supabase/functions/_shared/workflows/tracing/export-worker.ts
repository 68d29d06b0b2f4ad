/**
 * The trace export worker (docs/tracing.md): claims queued runs (claim_trace_exports), sends each
 * workspace's spans to its collector in one OTLP/HTTP protobuf request through the outbound guard,
 * and reports what happened (record_trace_exports): exported runs leave the queue; a collector
 * that is down, slow (EXPORT_TIMEOUT_MS) or answers 5xx/429 gets the batch again after a backoff
 * of 1, 2, 4... seconds, until the run's last attempt, after which its spans are dropped and
 * counted; any other answer drops them at once (sending the same bytes again cannot help). Runs
 * never wait for any of this: they only queued a message when they ended.
 *
 * Exporter headers (API keys) come decrypted from the claim; they go on the request and nowhere
 * else (never into a log or an error).
 */
import type { ServiceRpc } from "../../db/service-rpc.ts";
import { guardedFetch } from "../outbound/guard.ts";
import { failedCall, type OutboundSend } from "../outbound/webhooks/deliver.ts";
import { type AttemptAnswer, judgeAttempt } from "../outbound/webhooks/retry-policy.ts";
import { encodeSpans, type ExportedRun, MAX_SPANS_PER_RUN, type OtlpSpan, runSpans } from "./otlp-spans.ts";

/** One export request's time limit, answer included. */
export const EXPORT_TIMEOUT_MS = 10_000;
/** The longest backoff between attempts. */
export const MAX_BACKOFF_SECONDS = 60;

/** A queued run as claim_trace_exports hands it over. */
export interface ClaimedExport {
  messageId: number;
  /** How many times the message has been read, this time included. */
  attempt: number;
  workspaceId: string;
  endpoint: string;
  headers: Record<string, string> | null;
  run: Omit<ExportedRun, "workspaceId">;
}

/** What a message became, as record_trace_exports takes it. */
export interface MessageOutcome {
  messageId: number;
  outcome: "exported" | "retry" | "dropped";
  retryInSeconds?: number;
}

/** What one exporter's counters gain. */
export interface ExporterReport {
  workspaceId: string;
  exportedSpans: number;
  droppedSpans: number;
  error: string | null;
}

/** The wait before attempt `attempt + 1`: 1 s, doubling, at most MAX_BACKOFF_SECONDS. */
export function backoffSeconds(attempt: number): number {
  return Math.min(MAX_BACKOFF_SECONDS, 2 ** Math.max(0, attempt - 1));
}

/** What an export attempt's answer means for its messages. */
export function messageOutcomes(items: readonly ClaimedExport[], verdict: "delivered" | "retryable" | "final", maxAttempts: number): MessageOutcome[] {
  return items.map((item) => {
    if (verdict === "delivered") return { messageId: item.messageId, outcome: "exported" };
    if (verdict === "retryable" && item.attempt < maxAttempts) return { messageId: item.messageId, outcome: "retry", retryInSeconds: backoffSeconds(item.attempt) };
    return { messageId: item.messageId, outcome: "dropped" };
  });
}

/** What the worker depends on. */
export interface ExportOptions {
  rpc: ServiceRpc;
  batchSize: number;
  visibilitySeconds: number;
  send?: OutboundSend;
  timeoutMs?: number;
  maxSpansPerRun?: number;
}

/** What one pass did. */
export interface ExportSummary {
  runs: number;
  exportedSpans: number;
  droppedSpans: number;
  retried: number;
}

/** Sends one workspace's runs; returns its messages' outcomes and its counters. */
async function exportGroup(items: ClaimedExport[], maxAttempts: number, options: ExportOptions): Promise<{ outcomes: MessageOutcome[]; report: ExporterReport }> {
  const { send = guardedFetch, timeoutMs = EXPORT_TIMEOUT_MS, maxSpansPerRun = MAX_SPANS_PER_RUN } = options;
  const first = items[0];
  const spans: OtlpSpan[] = [];
  let capped = 0;
  for (const item of items) {
    const built = runSpans({ ...item.run, workspaceId: item.workspaceId }, maxSpansPerRun);
    spans.push(...built.spans);
    capped += built.dropped;
  }
  let answer: AttemptAnswer;
  let error: string | null = null;
  try {
    const response = await send(first.endpoint, {
      method: "POST",
      headers: { ...(first.headers ?? {}), "content-type": "application/x-protobuf", "user-agent": "orbita-trace-export/1" },
      body: encodeSpans(spans),
      redirect: "manual",
      timeoutMs,
      maxResponseBytes: 64 * 1024,
    });
    await response.body?.cancel().catch(() => {});
    answer = { kind: "status", status: response.status };
    if (response.status < 200 || response.status >= 300) error = `The collector answered HTTP ${response.status}`;
  } catch (thrown) {
    ({ answer, error } = failedCall(thrown));
  }
  const verdict = judgeAttempt(answer);
  const outcomes = messageOutcomes(items, verdict, maxAttempts);
  const dropped = outcomes.filter((outcome) => outcome.outcome === "dropped").length;
  const droppedSpans = verdict === "delivered" ? capped : dropped === 0 ? 0 : spans.length + capped;
  if (error !== null && dropped > 0) error = `${error}; the spans of ${dropped} run(s) were dropped`;
  return {
    outcomes,
    report: { workspaceId: first.workspaceId, exportedSpans: verdict === "delivered" ? spans.length : 0, droppedSpans, error },
  };
}

/** One pass: claim a batch, send it per workspace (in parallel), report. */
export async function exportTraces(options: ExportOptions): Promise<ExportSummary> {
  const claimed = (await options.rpc("claim_trace_exports", { p_batch_size: options.batchSize, p_visibility_timeout: options.visibilitySeconds })) as {
    exports: ClaimedExport[];
    maxAttempts: number;
  };
  if (claimed.exports.length === 0) return { runs: 0, exportedSpans: 0, droppedSpans: 0, retried: 0 };
  const groups = new Map<string, ClaimedExport[]>();
  for (const item of claimed.exports) groups.set(item.workspaceId, [...(groups.get(item.workspaceId) ?? []), item]);
  const results = await Promise.all([...groups.values()].map((items) => exportGroup(items, claimed.maxAttempts, options)));
  const messages = results.flatMap((result) => result.outcomes);
  const exporters = results.map((result) => result.report);
  await options.rpc("record_trace_exports", { p_report: { messages, exporters } });
  return {
    runs: claimed.exports.length,
    exportedSpans: exporters.reduce((sum, report) => sum + report.exportedSpans, 0),
    droppedSpans: exporters.reduce((sum, report) => sum + report.droppedSpans, 0),
    retried: messages.filter((message) => message.outcome === "retry").length,
  };
}
