/**
 * W3C Trace Context for runs (docs/tracing.md): a caller's `traceparent`/`tracestate` read with
 * OpenTelemetry's own propagator (so what counts as valid is the library's reading of the spec,
 * not a regex of ours), and the `traceparent` a run's outbound calls and completion webhooks carry.
 */
import { isSpanContextValid, ROOT_CONTEXT, trace, TraceFlags } from "@opentelemetry/api";
import { TraceState, W3CTraceContextPropagator } from "@opentelemetry/core";

/** A caller's trace context a run joins, as admit takes it (`p_trace`). */
export interface IncomingTrace {
  traceId: string;
  /** The caller's span: the run's root span is its child. */
  parentSpanId: string;
  traceState?: string;
}

/** A run's trace ids, as admit and claim hand them over (`trace` in the run payload). */
export interface RunTrace {
  traceId: string;
  /** The run's root span (`workflow.execute`). */
  spanId: string;
  parentSpanId?: string;
  traceState?: string;
}

const propagator = new W3CTraceContextPropagator();

const headerGetter = {
  keys: (carrier: Headers) => [...carrier.keys()],
  get: (carrier: Headers, key: string) => carrier.get(key) ?? undefined,
};

/** The caller's trace context from its request headers, or null when it sent none or an invalid one (the run then starts a trace). */
export function incomingTrace(headers: Headers): IncomingTrace | null {
  const context = trace.getSpanContext(propagator.extract(ROOT_CONTEXT, headers, headerGetter));
  if (!context || !isSpanContextValid(context)) return null;
  const traceState = context.traceState?.serialize();
  return { traceId: context.traceId, parentSpanId: context.spanId, ...(traceState ? { traceState } : {}) };
}

/** The `traceparent` (and `tracestate`) headers naming span `spanId` of trace `traceId`, sampled. */
export function traceHeaders(traceId: string, spanId: string, traceState?: string): Record<string, string> {
  const carrier: Record<string, string> = {};
  const spanContext = { traceId, spanId, traceFlags: TraceFlags.SAMPLED, isRemote: false, ...(traceState ? { traceState: new TraceState(traceState) } : {}) };
  propagator.inject(trace.setSpanContext(ROOT_CONTEXT, spanContext), carrier, { set: (target, key, value) => (target[key] = value) });
  return carrier;
}

const FNV_OFFSET = 0xcbf29ce484222325n;
const FNV_PRIME = 0x100000001b3n;
const MASK_64 = (1n << 64n) - 1n;

/**
 * The span id of one block instance (its trace span's id, e.g. `fn1[loop1:2]`) in the run whose
 * root span is `rootSpanId`. Derived, not drawn, so the span an outbound call names while the run
 * goes on is the one the exporter sends later from the stored trace, with nothing more stored.
 * FNV-1a over 64 bits; never all zeros (invalid in W3C).
 */
export function blockSpanId(rootSpanId: string, spanKey: string): string {
  let hash = FNV_OFFSET;
  for (const byte of new TextEncoder().encode(`${rootSpanId}/${spanKey}`)) hash = ((hash ^ BigInt(byte)) * FNV_PRIME) & MASK_64;
  if (hash === 0n) hash = 1n;
  return hash.toString(16).padStart(16, "0");
}

/** The span id of an outbound call of a block instance: the `index`-th call it made (0-based). */
export function callSpanId(rootSpanId: string, spanKey: string, index: number): string {
  return blockSpanId(rootSpanId, `${spanKey}#call${index}`);
}
