/**
 * The size budgets through the real endpoints (docs/workflow-limits.md): iterations across nested
 * loops, a block's output, the request body, the trace (values shortened, spans cut with a marker),
 * the state's size and block count (refused quickly by the database, not timed out), and the
 * Response block's headers (RFC 9110). Each refusal names the block or field at fault.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { MAX_BLOCK_OUTPUT_CHARS, MAX_REQUEST_BODY_BYTES, MAX_RUN_ITERATIONS, MAX_TRACE_CHARS } from "../../supabase/functions/_shared/workflows/core/limits.ts";
import { WorkflowBuilder } from "../../supabase/functions/_shared/workflows/state/state-builder.ts";
import type { WorkflowStateInput } from "../../supabase/functions/_shared/workflows/state/state-schema.ts";
import { fetchFrom, simulatedClientAddress } from "../helpers/clients.ts";
import { env } from "../helpers/env.ts";
import { createWorkflow, createWorkspace, type TestWorkspace } from "./factories.ts";
import { liftLimits } from "./logs-helpers.ts";

/** The most blocks a state may have: the database's cap, checked before anything else (docs/workflow-limits.md). */
const MAX_STATE_BLOCKS = 500;

interface TraceSpanLike {
  name: string;
  type: string;
  blockId: string;
  output?: unknown;
  input?: unknown;
  cut?: { spans: number };
  children?: TraceSpanLike[];
}

function allSpans(spans: TraceSpanLike[]): TraceSpanLike[] {
  return spans.flatMap((span) => [span, ...allSpans(span.children ?? [])]);
}

describe("size budgets and limits", () => {
  let workspace: TestWorkspace;
  const send = fetchFrom(simulatedClientAddress());

  async function run(workflowId: string, body: string = "{}"): Promise<{ status: number; text: string; body: Record<string, unknown> }> {
    const response = await send(`${env.url}/api/workflows/${workflowId}/run`, {
      method: "POST",
      headers: { Authorization: `Bearer ${workspace.members.editor.accessToken}`, "content-type": "application/json" },
      body,
    });
    const text = await response.text();
    return { status: response.status, text, body: text.startsWith("{") ? (JSON.parse(text) as Record<string, unknown>) : {} };
  }

  const create = (name: string, state: WorkflowStateInput) => createWorkflow(workspace.members.editor, workspace.id, name, state);

  beforeAll(async () => {
    workspace = await createWorkspace("Budgets");
    // Manual runs spend the plan's synchronous rate limit (5 a minute on Free); this suite runs more.
    await liftLimits(workspace.id);
  });

  it("stops nested loops at the run's iteration budget, naming the inner loop, without building a huge answer", async () => {
    const id = await create(
      "Nested",
      new WorkflowBuilder()
        .block("start", "manual_trigger", {}, { name: "Start" })
        .loop("outer", { nodes: ["inner"], loopType: "for", iterations: 300 }, { name: "Outer" })
        .loop("inner", { nodes: ["note"], loopType: "for", iterations: 300 }, { name: "Inner" })
        .block("note", "variables", { assignments: [{ name: "at", value: "<inner.index>" }] }, { name: "Note" })
        .edge("start", "outer")
        .edge("outer", "inner", "loop-start")
        .edge("inner", "note", "loop-start")
        .build(),
    );
    const { status, text, body } = await run(id);
    expect(status).toBe(500);
    expect(body).toMatchObject({ errorCode: "LIMIT_EXCEEDED", failedBlock: { id: "inner", name: "Inner", type: "loop" } });
    expect(body.error).toContain(`${MAX_RUN_ITERATIONS.toLocaleString("en")} iterations and branches`);
    expect(body.error).toMatch(/\(in iteration \d+ of loop "Outer"\)/);
    expect(text.length).toBeLessThan(MAX_TRACE_CHARS + 200_000);
  });

  it("fails a block whose output is over the budget, naming it", async () => {
    const id = await create(
      "Big output",
      new WorkflowBuilder()
        .block("start", "manual_trigger", {}, { name: "Start" })
        .block("big", "function", { code: `return 'x'.repeat(${MAX_BLOCK_OUTPUT_CHARS + 10});` }, { name: "Big" })
        .chain("start", "big")
        .build(),
    );
    const { status, body } = await run(id);
    expect(status).toBe(500);
    expect(body).toMatchObject({ errorCode: "OUTPUT_TOO_LARGE", failedBlock: { id: "big", name: "Big", type: "function" } });
    expect(body.error).toMatch(/^Block "Big" \(function\): its result is 4,194,316 characters of JSON, larger than the budget of 4 MiB/);
  });

  it("answers a 4 MB input with the output and a trace of markers, not copies of the input", async () => {
    const id = await create(
      "Large input",
      new WorkflowBuilder()
        .block("start", "manual_trigger", { inputFormat: [{ name: "data", type: "string" }] }, { name: "Start" })
        .block("size", "function", { code: "return <start.data>.length;" }, { name: "Size" })
        .chain("start", "size")
        .build(),
    );
    const data = "d".repeat(4_000_000);
    const { status, text, body } = await run(id, JSON.stringify({ input: { data } }));
    expect(status).toBe(200);
    expect(body.output).toEqual({ result: 4_000_000, stdout: "" });
    expect(text.length).toBeLessThan(200_000);
    const [trigger, size] = body.traceSpans as TraceSpanLike[];
    expect(trigger.output).toMatchObject({ __truncated: true, chars: expect.any(Number), preview: expect.stringMatching(/^\{"data":"ddd/) });
    expect((trigger.output as { chars: number }).chars).toBeGreaterThan(8_000_000);
    // The Function's trace shows its code as written, references and all, never the values they read.
    expect(size.input).toMatchObject({ code: "return <start.data>.length;" });
  });

  it("cuts the spans past the trace's budget and says how many", async () => {
    const filler = "f".repeat(3_000);
    const id = await create(
      "Long trace",
      new WorkflowBuilder()
        .block("start", "manual_trigger", {}, { name: "Start" })
        .loop("each", { nodes: ["note"], loopType: "for", iterations: 1_000 }, { name: "Each" })
        .block("note", "variables", { assignments: [{ name: "text", value: `${filler}<loop.index>` }] }, { name: "Note" })
        .block("count", "function", { code: "return <each.results>.length;" }, { name: "Count" })
        .edge("start", "each")
        .edge("each", "note", "loop-start")
        .edge("each", "count")
        .build(),
    );
    const { status, text, body } = await run(id);
    expect(status).toBe(200);
    expect(body.output).toEqual({ result: 1_000, stdout: "" });
    const spans = allSpans(body.traceSpans as TraceSpanLike[]);
    const noted = spans.filter((span) => span.cut !== undefined);
    expect(noted.length).toBeGreaterThan(0);
    const cut = noted.reduce((sum, span) => sum + (span.cut?.spans ?? 0), 0);
    const kept = spans.filter((span) => span.type === "variables" || span.type === "loop-iteration").length;
    // Every iteration span and block span of the loop is either shown or counted as cut.
    expect(kept + cut).toBe(2_000);
    expect(spans.filter((span) => span.type === "variables").length).toBeLessThan(1_000);
    // The outline survives: the top-level spans are all there, the cut is inside the loop.
    expect((body.traceSpans as TraceSpanLike[]).map((span) => span.name)).toEqual(["Start", "Each", "Count"]);
    expect(text.length).toBeLessThan(MAX_TRACE_CHARS + 100_000);
  });

  it("refuses a request body over the cap with 413", async () => {
    const id = await create("Any", new WorkflowBuilder().block("start", "manual_trigger", {}, { name: "Start" }).build());
    const { status, body } = await run(id, JSON.stringify({ input: { data: "b".repeat(MAX_REQUEST_BODY_BYTES) } }));
    expect(status).toBe(413);
    expect(body).toMatchObject({ code: "BODY_TOO_LARGE" });
  });

  it("refuses Response headers that HTTP cannot carry, naming the Response block", async () => {
    // A header name HTTP refuses is refused when the workflow is saved; a value only known at run
    // time (a reference) is checked when the Response answers.
    await expect(create(
      "Bad header name",
      new WorkflowBuilder()
        .block("start", "manual_trigger", {}, { name: "Start" })
        .block("answer", "response", { headers: { "Bad Header\n": "x" } }, { name: "Answer" })
        .chain("start", "answer")
        .build(),
    )).rejects.toMatchObject({ message: expect.stringContaining("Answer") });

    const injected = await create(
      "Injected header value",
      new WorkflowBuilder()
        .block("start", "manual_trigger", { inputFormat: [{ name: "who", type: "string", value: "ana\r\nSet-Cookie: admin=1" }] }, { name: "Start" })
        .block("answer", "response", { headers: { "X-User": "<start.who>" } }, { name: "Answer" })
        .chain("start", "answer")
        .build(),
    );
    const value = await run(injected);
    expect(value.status).toBe(500);
    expect(value.body.error).toContain('header "X-User" has a value HTTP cannot carry');

    const fine = await create(
      "Good headers",
      new WorkflowBuilder()
        .block("start", "manual_trigger", {}, { name: "Start" })
        .block("answer", "response", { status: 201, headers: { "X-Request-Tag": "a b\tc", "Cache-Control": "no-store" } }, { name: "Answer" })
        .chain("start", "answer")
        .build(),
    );
    expect((await run(fine)).body).toMatchObject({ success: true, response: { status: 201, headers: { "X-Request-Tag": "a b\tc", "Cache-Control": "no-store" } } });
  });
});

describe("state caps, enforced by the database on save", () => {
  let workspace: TestWorkspace;

  beforeAll(async () => {
    workspace = await createWorkspace("State caps");
    // Manual runs spend the plan's synchronous rate limit (5 a minute on Free); this suite runs more.
    await liftLimits(workspace.id);
  });

  /** A manual trigger followed by a chain of `count` Function blocks, each reading the one before. */
  function chainOf(count: number): WorkflowStateInput {
    const builder = new WorkflowBuilder().block("start", "manual_trigger", {}, { name: "Start" });
    const ids = ["start"];
    for (let index = 1; index <= count; index++) {
      builder.block(`b${index}`, "function", { code: `return <${index === 1 ? "start" : `b${index - 1}`}.result>;` });
      ids.push(`b${index}`);
    }
    return builder.chain(...ids).build();
  }

  it("refuses a 4,000-block state at once with a clear error, instead of timing out", async () => {
    const started = performance.now();
    const { error } = await workspace.members.editor.client.from("workflows").insert({ workspace_id: workspace.id, name: "Huge", state: chainOf(4_000) });
    const elapsed = performance.now() - started;
    expect(error).toMatchObject({ code: "23514" });
    expect(error?.message).toBe(`The workflow has 4,001 blocks; a workflow may have at most ${MAX_STATE_BLOCKS.toLocaleString("en")} (and 1 more issue)`);
    // Its 4,000 edges are past their cap too; nothing else is looked at.
    expect(JSON.parse(error?.details ?? "[]")).toEqual([
      expect.objectContaining({ code: "too_many_blocks", field: "blocks" }),
      expect.objectContaining({ code: "too_many_edges", field: "edges", message: "The workflow has 4,000 edges; a workflow may have at most 2,000" }),
    ]);
    // The statement timeout of a signed-in save is 8 s; the refusal comes long before it.
    expect(elapsed).toBeLessThan(4_000);
  });

  it("saves a state at the block cap within the statement timeout", async () => {
    const started = performance.now();
    const { error } = await workspace.members.editor.client.from("workflows").insert({ workspace_id: workspace.id, name: "At the cap", state: chainOf(MAX_STATE_BLOCKS - 1) });
    expect(error).toBeNull();
    expect(performance.now() - started).toBeLessThan(8_000);
  });

  it("refuses a 5 MB state", async () => {
    const state = new WorkflowBuilder()
      .block("start", "manual_trigger", {}, { name: "Start" })
      .block("big", "function", { code: `return '${"c".repeat(5_000_000)}';` }, { name: "Big" })
      .chain("start", "big")
      .build();
    const { error } = await workspace.members.editor.client.from("workflows").insert({ workspace_id: workspace.id, name: "Heavy", state });
    expect(error).toMatchObject({ code: "23514" });
    expect(error?.message).toMatch(/^The workflow state is [\d,]+ bytes of JSON; a workflow may have at most [\d,]+/);
  });
});
