/**
 * A finished run as OpenTelemetry spans, and those spans as an OTLP/HTTP protobuf request
 * (docs/tracing.md). Built from what the run recorded, after it ended: its trace ids and its
 * stored trace spans, which the executor masked on their way out (redaction.ts), so span
 * attributes show secrets exactly as the logs API does and nothing here masks again.
 *
 * The spans: `workflow.execute` (the root, child of the caller's span when the run joined a
 * trace), one `block.execute` per block instance (iterations of loops and parallels nest theirs),
 * and under a block its outbound calls: one `http.request` per HTTP attempt (its own timing), one
 * `model.call` for an agent's model and one `vector.call` for a vector store (the block's timing).
 * Block span ids are derived as the executor derives them for `traceparent` (trace-context.ts).
 */
import { SpanKind, SpanStatusCode, TraceFlags, type AttributeValue, type Attributes } from "@opentelemetry/api";
import { TraceState } from "@opentelemetry/core";
import { ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import type { TraceSpan } from "../core/context.ts";
import { blockSpanId, callSpanId } from "./trace-context.ts";

/** A span as the OTLP serializer takes it (the SDK's ReadableSpan). */
export type OtlpSpan = Parameters<typeof ProtobufTraceSerializer.serializeRequest>[0][number];

/** Most spans sent for one run, root included; the rest are counted as dropped (docs/tracing.md#limits). */
export const MAX_SPANS_PER_RUN = 1000;

/** What claim_trace_exports hands over of a run. */
export interface ExportedRun {
  executionId: string;
  workflowId: string;
  workflowName: string | null;
  workspaceId: string;
  trigger: string;
  status: string;
  startedAt: string;
  endedAt: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  costTotal: number | string | null;
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  traceState: string | null;
  traceSpans: unknown;
}

type HrTime = [number, number];

const SCOPE = { name: "orbita.workflows", version: "1" };

function hrTime(epochMs: number): HrTime {
  const seconds = Math.floor(epochMs / 1000);
  return [seconds, Math.round((epochMs - seconds * 1000) * 1e6)];
}

function record(value: unknown): Record<string, unknown> | null {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

/** Attributes without the absent ones, and with every value an attribute can hold (objects as JSON). */
function attributes(entries: Record<string, unknown>): Attributes {
  const out: Attributes = {};
  for (const [key, value] of Object.entries(entries)) {
    if (value === undefined || value === null) continue;
    out[key] = (typeof value === "string" || typeof value === "number" || typeof value === "boolean" ? value : JSON.stringify(value)) as AttributeValue;
  }
  return out;
}

/** Builds spans for one run, sharing one resource (the workspace) and scope. */
class SpanBuilder {
  readonly spans: OtlpSpan[] = [];
  dropped = 0;
  private readonly traceState: TraceState | undefined;
  private readonly resource: OtlpSpan["resource"];

  constructor(readonly run: ExportedRun, private readonly maxSpans: number) {
    this.traceState = run.traceState ? new TraceState(run.traceState) : undefined;
    this.resource = { attributes: { "service.name": "orbita-workflows", "orbita.workspace.id": run.workspaceId } } as unknown as OtlpSpan["resource"];
  }

  add(name: string, kind: SpanKind, spanId: string, parentSpanId: string | null, startMs: number, endMs: number, attrs: Attributes, error: string | null): void {
    if (this.spans.length >= this.maxSpans) {
      this.dropped++;
      return;
    }
    const { traceId } = this.run;
    const traceState = this.traceState;
    const end = Math.max(startMs, endMs);
    this.spans.push({
      name,
      kind,
      spanContext: () => ({ traceId, spanId, traceFlags: TraceFlags.SAMPLED, ...(traceState ? { traceState } : {}) }),
      ...(parentSpanId ? { parentSpanContext: { traceId, spanId: parentSpanId, traceFlags: TraceFlags.SAMPLED, isRemote: false } } : {}),
      startTime: hrTime(startMs),
      endTime: hrTime(end),
      duration: hrTime(end - startMs),
      status: error === null ? { code: SpanStatusCode.OK } : { code: SpanStatusCode.ERROR, message: error },
      attributes: attrs,
      links: [],
      events: [],
      ended: true,
      resource: this.resource,
      instrumentationScope: SCOPE,
      droppedAttributesCount: 0,
      droppedEventsCount: 0,
      droppedLinksCount: 0,
    } as unknown as OtlpSpan);
  }
}

/** The cost a block reports in its output (`cost.total`, as agents do), when it reports one. */
function blockCost(output: Record<string, unknown> | null): number | undefined {
  const total = record(output?.cost)?.total;
  return typeof total === "number" ? total : undefined;
}

/** Adds the outbound calls a block's recorded output shows, as children of its span. */
function addCalls(builder: SpanBuilder, span: TraceSpan, spanId: string, startMs: number, endMs: number): void {
  const output = record(span.output);
  const input = record(span.input);
  const root = builder.run.spanId;
  if (span.type === "api" && Array.isArray(output?.attempts)) {
    output.attempts.forEach((attempt, index) => {
      const a = record(attempt);
      if (!a || typeof a.startedAt !== "string") return;
      const start = Date.parse(a.startedAt);
      const duration = typeof a.durationMs === "number" ? a.durationMs : 0;
      builder.add("http.request", SpanKind.CLIENT, callSpanId(root, span.id, index), spanId, start, start + duration, attributes({
        "http.request.method": typeof input?.method === "string" ? input.method.toUpperCase() : "GET",
        "url.full": input?.url,
        "http.response.status_code": a.status,
        "orbita.attempt": a.attempt,
        "error.type": a.code,
      }), typeof a.error === "string" ? a.error : null);
    });
  } else if (span.type === "agent" && output && typeof output.model === "string") {
    const tokens = record(output.tokens);
    builder.add("model.call", SpanKind.CLIENT, callSpanId(root, span.id, 0), spanId, startMs, endMs, attributes({
      "gen_ai.request.model": output.model,
      "gen_ai.usage.input_tokens": tokens?.prompt,
      "gen_ai.usage.output_tokens": tokens?.completion,
      "orbita.cost": blockCost(output),
    }), span.status === "error" ? span.error ?? "the model call failed" : null);
  } else if (span.type === "vectordb") {
    builder.add("vector.call", SpanKind.CLIENT, callSpanId(root, span.id, 0), spanId, startMs, endMs, attributes({
      "db.system": "qdrant",
      "db.operation.name": input?.operation,
      "db.collection.name": input?.collection,
    }), span.status === "error" ? span.error ?? "the vector store call failed" : null);
  }
}

function addBlock(builder: SpanBuilder, span: TraceSpan, parentSpanId: string): void {
  const spanId = blockSpanId(builder.run.spanId, span.id);
  const startMs = Date.parse(span.startedAt);
  const endMs = span.endedAt ? Date.parse(span.endedAt) : startMs + (span.durationMs ?? 0);
  const error = span.status === "error" ? span.error ?? "the block failed" : null;
  builder.add("block.execute", SpanKind.INTERNAL, spanId, parentSpanId, startMs, endMs, attributes({
    "orbita.block.id": span.blockId,
    "orbita.block.type": span.type,
    "orbita.block.name": span.name,
    "orbita.block.status": span.status,
    "orbita.block.error": span.error,
    "orbita.block.error_code": span.errorCode,
    "orbita.block.error_handled": span.errorHandled,
    "orbita.block.cost": blockCost(record(span.output)),
    "orbita.block.iteration": span.iteration?.index,
    "orbita.spans_cut": span.cut?.spans,
  }), error);
  addCalls(builder, span, spanId, startMs, endMs);
  for (const child of span.children ?? []) addBlock(builder, child, spanId);
}

/** The spans of `run` (at most `maxSpans`), and how many more there were. */
export function runSpans(run: ExportedRun, maxSpans = MAX_SPANS_PER_RUN): { spans: OtlpSpan[]; dropped: number } {
  const builder = new SpanBuilder(run, maxSpans);
  const startMs = Date.parse(run.startedAt);
  const endMs = run.endedAt ? Date.parse(run.endedAt) : startMs;
  const failed = run.status === "failed";
  builder.add("workflow.execute", SpanKind.SERVER, run.spanId, run.parentSpanId, startMs, endMs, attributes({
    "orbita.execution.id": run.executionId,
    "orbita.workflow.id": run.workflowId,
    "orbita.workflow.name": run.workflowName,
    "orbita.run.trigger": run.trigger,
    "orbita.run.status": run.status,
    "orbita.run.error_code": run.errorCode,
    "orbita.run.error": run.errorMessage,
    "orbita.run.cost": run.costTotal === null ? undefined : Number(run.costTotal),
  }), failed ? run.errorMessage ?? run.errorCode ?? "the run failed" : null);
  const traceSpans = Array.isArray(run.traceSpans) ? (run.traceSpans as TraceSpan[]) : [];
  for (const span of traceSpans) addBlock(builder, span, run.spanId);
  return { spans: builder.spans, dropped: builder.dropped };
}

/** The OTLP/HTTP protobuf body (ExportTraceServiceRequest) carrying `spans`. */
export function encodeSpans(spans: OtlpSpan[]): Uint8Array<ArrayBuffer> {
  const body = ProtobufTraceSerializer.serializeRequest(spans);
  if (!body) throw new Error("The OTLP serializer produced no body");
  // A copy on its own ArrayBuffer, which fetch takes as a body.
  return new Uint8Array(body);
}
