/**
 * A local OTLP/HTTP trace receiver for tests: a Node http server on a free loopback port taking
 * `POST /v1/traces` and decoding each body with the code OpenTelemetry generated from the official
 * opentelemetry-proto definitions (shipped in @opentelemetry/otlp-transformer), so a test sees the
 * spans as a collector would. It can also play a collector that is down (answers 503).
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import { createRequire } from "node:module";

/** An attribute as a test reads it: strings, numbers and booleans as themselves. */
export type AttributeValue = string | number | boolean | null;

/** A received span, ids as lowercase hex. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  traceState: string;
  name: string;
  kind: number;
  status: { code: number; message: string };
  attributes: Record<string, AttributeValue>;
  resource: Record<string, AttributeValue>;
  startNanos: bigint;
  endNanos: bigint;
}

/** One request the receiver took. */
export interface ReceivedRequest {
  headers: IncomingMessage["headers"];
  contentType: string | undefined;
  spans: ReceivedSpan[];
}

interface ProtoLong { toString(): string }
interface ProtoAnyValue { stringValue?: string | null; intValue?: ProtoLong | number | null; doubleValue?: number | null; boolValue?: boolean | null }
interface ProtoKeyValue { key: string; value?: ProtoAnyValue | null }
interface ProtoSpan {
  traceId: Uint8Array; spanId: Uint8Array; parentSpanId?: Uint8Array | null; traceState?: string | null; name: string; kind?: number | null;
  status?: { code?: number | null; message?: string | null } | null; attributes?: ProtoKeyValue[] | null;
  startTimeUnixNano: ProtoLong | number; endTimeUnixNano: ProtoLong | number;
}
interface ProtoRequest { resourceSpans?: { resource?: { attributes?: ProtoKeyValue[] | null } | null; scopeSpans?: { spans?: ProtoSpan[] | null }[] | null }[] | null }

const require = createRequire(import.meta.url);
const root = require("@opentelemetry/otlp-transformer/build/src/generated/root.js") as {
  opentelemetry: { proto: { collector: { trace: { v1: { ExportTraceServiceRequest: { decode(bytes: Uint8Array): ProtoRequest } } } } } };
};
const { ExportTraceServiceRequest } = root.opentelemetry.proto.collector.trace.v1;

const hex = (bytes: Uint8Array | null | undefined): string => Buffer.from(bytes ?? []).toString("hex");

function valueOf(value: ProtoAnyValue | null | undefined): AttributeValue {
  if (!value) return null;
  if (value.stringValue !== undefined && value.stringValue !== null) return value.stringValue;
  if (value.boolValue !== undefined && value.boolValue !== null) return value.boolValue;
  if (value.intValue !== undefined && value.intValue !== null) return Number(value.intValue.toString());
  if (value.doubleValue !== undefined && value.doubleValue !== null) return value.doubleValue;
  return null;
}

function attributesOf(list: ProtoKeyValue[] | null | undefined): Record<string, AttributeValue> {
  return Object.fromEntries((list ?? []).map((entry) => [entry.key, valueOf(entry.value)]));
}

/** Decodes an ExportTraceServiceRequest body into its spans. */
export function decodeTraces(body: Uint8Array): ReceivedSpan[] {
  const request = ExportTraceServiceRequest.decode(body);
  return (request.resourceSpans ?? []).flatMap((resourceSpans) => {
    const resource = attributesOf(resourceSpans.resource?.attributes);
    return (resourceSpans.scopeSpans ?? []).flatMap((scope) => (scope.spans ?? []).map((span) => ({
      traceId: hex(span.traceId),
      spanId: hex(span.spanId),
      parentSpanId: hex(span.parentSpanId),
      traceState: span.traceState ?? "",
      name: span.name,
      kind: span.kind ?? 0,
      status: { code: span.status?.code ?? 0, message: span.status?.message ?? "" },
      attributes: attributesOf(span.attributes),
      resource,
      startNanos: BigInt(span.startTimeUnixNano.toString()),
      endNanos: BigInt(span.endTimeUnixNano.toString()),
    })));
  });
}

/** A running receiver. */
export interface OtlpReceiver {
  /** The traces endpoint, e.g. http://127.0.0.1:PORT/v1/traces. */
  url: string;
  requests: ReceivedRequest[];
  /** Every span received so far. */
  spans(): ReceivedSpan[];
  /** How many requests arrived while it played a collector that is down. */
  refused: number;
  /** Answers 503 (down) or 200. */
  setDown(down: boolean): void;
  close(): Promise<void>;
}

/** Starts a receiver on a free loopback port. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  let down = false;
  const receiver = { requests: [] as ReceivedRequest[], refused: 0 };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      if (down) {
        receiver.refused++;
        response.writeHead(503).end();
        return;
      }
      try {
        const spans = decodeTraces(Buffer.concat(chunks));
        receiver.requests.push({ headers: request.headers, contentType: request.headers["content-type"], spans });
        response.writeHead(200, { "content-type": "application/x-protobuf" }).end();
      } catch {
        response.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("the OTLP receiver has no port");
  return {
    url: `http://127.0.0.1:${address.port}/v1/traces`,
    requests: receiver.requests,
    spans: () => receiver.requests.flatMap((request) => request.spans),
    get refused() {
      return receiver.refused;
    },
    setDown: (value) => {
      down = value;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
