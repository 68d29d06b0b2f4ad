/**
 * Traces out, end to end: a run started through the execute API with a W3C traceparent joins the
 * caller's trace; its HTTP block's request and its completion webhook carry a traceparent naming
 * the run's spans (a local server sees them); the real `workflow-trace-export` worker, driven by
 * the platform's queue poller, sends the spans to a local OTLP/HTTP receiver that decodes them
 * with OpenTelemetry's generated code for the official protos: right parent, block attributes, a
 * secret masked, the exporter's write-only header. A collector that is down leaves runs as they
 * were, and the export retries, then gives up and counts what it dropped.
 */
import type { Sql } from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebhookReceiver } from "../stand-ins/webhook-receiver.ts";
import { startOtlpReceiver, type OtlpReceiver } from "../helpers/workflows/otlp-receiver.ts";
import { WorkflowBuilder } from "../../supabase/functions/_shared/workflows/state/state-builder.ts";
import { blockSpanId } from "../../supabase/functions/_shared/workflows/tracing/trace-context.ts";
import { createWorkspace, type TestWorkspace } from "./factories.ts";
import { apiKey, call, deployedWorkflow, eventually, execute, expectDocumented } from "./execute-api.ts";
import { liftLimits, openDatabase } from "./logs-helpers.ts";
import { subscribe } from "./webhooks-helpers.ts";

const SECRET = "tr4ce-secret-value-9876";
const COLLECTOR_KEY = "collector-key-0123456789";
const CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN = "00f067aa0ba902b7";

describe("traces out", () => {
  let sql: Sql;
  let collector: OtlpReceiver;
  let target: WebhookReceiver;
  let workspace: TestWorkspace;
  let workflowId: string;
  let key: string;

  beforeAll(async () => {
    sql = openDatabase();
    collector = await startOtlpReceiver();
    target = await WebhookReceiver.start();
    workspace = await createWorkspace("Traced");
    await liftLimits(workspace.id);
    const { error } = await workspace.owner.client.rpc("set_environment_variable", { p_workspace_id: workspace.id, p_name: "TRACE_TOKEN", p_value: SECRET });
    if (error) throw error;
    const state = new WorkflowBuilder()
      .block("start", "api_trigger", {}, { name: "Start" })
      .block("fetch", "api", { url: `${target.url("/called")}?token={{TRACE_TOKEN}}` }, { name: "Fetch" })
      .block("done", "response", { body: { status: "<fetch.status>" } }, { name: "Done" })
      .chain("start", "fetch", "done")
      .build();
    workflowId = await deployedWorkflow(workspace.owner, workspace.id, "Traced flow", state);
    key = (await apiKey(workspace.owner)).key;
    await subscribe(workspace.members.editor, workflowId, target.url("/completed"));
  });

  afterAll(async () => {
    await collector.close();
    await target.stop();
    await sql.end();
  });

  it("lets an admin configure the exporter through the data API, its headers write-only", async () => {
    const denied = await workspace.members.editor.client.from("workflow_trace_exporters").insert({ workspace_id: workspace.id, endpoint: collector.url });
    expect(denied.error?.code).toBe("42501");
    const created = await workspace.members.admin.client.from("workflow_trace_exporters")
      .insert({ workspace_id: workspace.id, endpoint: collector.url, headers: { "x-collector-key": COLLECTOR_KEY } }).select().single();
    expect(created.error).toBeNull();
    expect(created.data).toMatchObject({ endpoint: collector.url, headers: null, header_names: ["x-collector-key"], enabled: true });
    const seen = await workspace.members.viewer.client.from("workflow_trace_exporters").select("*").eq("workspace_id", workspace.id).single();
    expect(JSON.stringify(seen.data)).not.toContain(COLLECTOR_KEY);
  });

  it("joins the caller's trace and exports the run's spans with the right parents, attributes and masking", async () => {
    collector.setDown(false);
    const answer = await execute(workflowId, key, {}, { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`, tracestate: "caller=1" });
    expect(answer.status).toBe(200);
    const executionId = answer.headers.get("x-execution-id") as string;

    const detail = await call("GET", `/api/v2/runs/${executionId}`, { headers: { "X-API-Key": key } });
    expect(detail.status).toBe(200);
    expectDocumented("GET", "/api/v2/runs/{runId}", detail);
    const trace = (detail.body.data as { trace: { traceId: string; spanId: string; parentSpanId: string } }).trace;
    expect(trace).toMatchObject({ traceId: CALLER_TRACE, parentSpanId: CALLER_SPAN });
    expect(trace.spanId).toMatch(/^[0-9a-f]{16}$/);

    // The HTTP block's request names the block's span; the completion webhook names the run's.
    const [called] = await target.waitFor("/called", (arrivals) => arrivals.length > 0);
    expect(called.headers.traceparent).toBe(`00-${CALLER_TRACE}-${blockSpanId(trace.spanId, "fetch")}-01`);
    expect(called.headers.tracestate).toBe("caller=1");
    const [completed] = await target.waitFor("/completed", (arrivals) => arrivals.some((arrival) => (arrival.json as { data?: { executionId?: string } })?.data?.executionId === executionId));
    expect(completed.headers.traceparent).toBe(`00-${CALLER_TRACE}-${trace.spanId}-01`);

    const spans = await eventually("the run's spans at the collector", async () => collector.spans().filter((span) => span.traceId === CALLER_TRACE), (found) => found.length >= 5);
    const root = spans.find((span) => span.name === "workflow.execute");
    expect(root).toMatchObject({ spanId: trace.spanId, parentSpanId: CALLER_SPAN, traceState: "caller=1" });
    expect(root?.attributes).toMatchObject({ "orbita.execution.id": executionId, "orbita.workflow.id": workflowId, "orbita.run.status": "completed", "orbita.run.trigger": "api" });
    const fetch = spans.find((span) => span.name === "block.execute" && span.attributes["orbita.block.id"] === "fetch");
    expect(fetch).toMatchObject({ spanId: blockSpanId(trace.spanId, "fetch"), parentSpanId: trace.spanId, status: { code: 1 } });
    expect(fetch?.attributes).toMatchObject({ "orbita.block.type": "api", "orbita.block.name": "Fetch", "orbita.block.status": "success" });
    const http = spans.find((span) => span.name === "http.request");
    expect(http?.parentSpanId).toBe(fetch?.spanId);
    expect(http?.attributes["http.response.status_code"]).toBe(200);
    expect(http?.attributes["url.full"]).toContain("token=***");
    expect(JSON.stringify(spans, (_key, value: unknown) => (typeof value === "bigint" ? String(value) : value))).not.toContain(SECRET);

    const request = collector.requests.find((candidate) => candidate.spans.some((span) => span.traceId === CALLER_TRACE));
    expect(request?.contentType).toBe("application/x-protobuf");
    expect(request?.headers["x-collector-key"]).toBe(COLLECTOR_KEY);
  });

  it("starts a trace of its own for a run without a valid traceparent", async () => {
    const answer = await execute(workflowId, key, {}, { traceparent: "00-not-a-trace-01" });
    expect(answer.status).toBe(200);
    const [row] = await sql<{ trace_id: string; trace_parent_span_id: string | null }[]>`
      select trace_id, trace_parent_span_id from public.workflow_executions where id = ${answer.headers.get("x-execution-id") as string}`;
    expect(row.trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(row.trace_id).not.toBe(CALLER_TRACE);
    expect(row.trace_parent_span_id).toBeNull();
  });

  it("leaves runs unaffected by a collector that is down: the export retries, then gives up and counts the dropped spans", async () => {
    collector.setDown(true);
    const before = collector.refused;
    const answer = await execute(workflowId, key, {});
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ status: 200 });
    const executionId = answer.headers.get("x-execution-id") as string;
    // Four attempts (1, 2 and 4 s apart), then the run's message leaves the queue.
    await eventually("the export to give up", async () => {
      const [{ waiting }] = await sql<{ waiting: number }[]>`
        select count(*)::int as waiting from pgmq.q_workflow_trace_exports where message ->> 'executionId' = ${executionId}`;
      return { waiting, refused: collector.refused - before };
    }, ({ waiting, refused }) => waiting === 0 && refused >= 4, 45_000);
    const [exporter] = await sql<{ dropped_spans: string; last_error: string }[]>`
      select dropped_spans, last_error from public.workflow_trace_exporters where workspace_id = ${workspace.id}`;
    expect(Number(exporter.dropped_spans)).toBeGreaterThanOrEqual(4);
    expect(exporter.last_error).toContain("HTTP 503");
    expect(exporter.last_error).not.toContain(COLLECTOR_KEY);
    collector.setDown(false);
  }, 60_000);
});
