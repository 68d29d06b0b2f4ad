import { describe, expect, it } from "vitest";
import type { DraftAccess, WorkflowStore } from "../runs/workflow-store.ts";
import { WorkflowBuilder } from "../state/state-builder.ts";
import { handleManualRun } from "./manual-run-endpoint.ts";
import { RequestError } from "./request-error.ts";

const WORKFLOW_ID = "5f0c6d0e-1111-4222-8333-944455556666";
const state = new WorkflowBuilder()
  .block("api", "api_trigger", { inputFormat: [{ name: "who", type: "string", value: "editor" }] }, { name: "API" })
  .block("greet", "function", { code: "return 'hi ' + <api.who> + ' ' + {{SUFFIX}};" }, { name: "Greet" })
  .chain("api", "greet")
  .build();

function store(draft: Partial<DraftAccess> | null = {}, env: Record<string, string> = { SUFFIX: "!" }): WorkflowStore & { seen: string[] } {
  const seen: string[] = [];
  return {
    seen,
    loadDraft: (authorization, workflowId) => {
      seen.push(`${authorization} ${workflowId}`);
      if (authorization === "Bearer bad") return Promise.reject(new RequestError("UNAUTHORIZED", "token refused"));
      return Promise.resolve(draft && { workflowId, workspaceId: "ws", name: "W", state, role: "editor", ...draft });
    },
    loadEnvironment: () => Promise.resolve(env),
  };
}

function post(body?: unknown, authorization = "Bearer token"): Request {
  return new Request(`http://x/api/workflows/${WORKFLOW_ID}/run`, {
    method: "POST",
    headers: { authorization, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
  });
}

describe("the manual-run endpoint", () => {
  it("run the draft with the value column and the workspace environment", async () => {
    const fake = store();
    const response = await handleManualRun(post(), WORKFLOW_ID, fake);
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body).toMatchObject({ success: true, output: { result: "hi editor !" }, metadata: { trigger: "manual" } });
    expect(body.traceSpans.map((span: { name: string }) => span.name)).toEqual(["API", "Greet"]);
    expect(fake.seen).toEqual([`Bearer token ${WORKFLOW_ID}`]);
  });

  it("take an input that replaces the value column", async () => {
    const body = await (await handleManualRun(post({ input: { who: "ana" } }), WORKFLOW_ID, store())).json();
    expect(body.output).toEqual({ result: "hi ana !", stdout: "" });
  });

  it("need a session, and an editor", async () => {
    expect((await handleManualRun(post(undefined, ""), WORKFLOW_ID, store())).status).toBe(401);
    expect((await handleManualRun(post(undefined, "Bearer bad"), WORKFLOW_ID, store())).status).toBe(401);
    const forbidden = await handleManualRun(post(), WORKFLOW_ID, store({ role: "viewer" }));
    expect(forbidden.status).toBe(403);
    expect(await forbidden.json()).toMatchObject({ code: "FORBIDDEN" });
  });

  it("answer 404 for workflows the caller cannot see or ids that are not ids", async () => {
    expect((await handleManualRun(post(), WORKFLOW_ID, store(null))).status).toBe(404);
    expect((await handleManualRun(post(), "not-a-uuid", store())).status).toBe(404);
  });

  it("refuse bad bodies and unrunnable drafts with 400", async () => {
    expect(await (await handleManualRun(post("{oops"), WORKFLOW_ID, store())).json()).toMatchObject({ code: "INVALID_BODY" });
    expect(await (await handleManualRun(post({ extra: 1 }), WORKFLOW_ID, store())).json()).toMatchObject({ code: "INVALID_BODY" });
    const invalid = await handleManualRun(post(), WORKFLOW_ID, store({ state: {} }));
    expect(invalid.status).toBe(400);
    expect(await invalid.json()).toMatchObject({ code: "INVALID_WORKFLOW", issues: [{ code: "no_trigger" }] });
    const noTrigger = await handleManualRun(post({ triggerBlockId: "greet" }), WORKFLOW_ID, store());
    expect(await noTrigger.json()).toMatchObject({ code: "INVALID_INPUT" });
  });

  it("report a failed run with 500, and a missing variable by name", async () => {
    const response = await handleManualRun(post(), WORKFLOW_ID, store({}, {}));
    expect(response.status).toBe(500);
    expect(await response.json()).toMatchObject({ code: "EXECUTION_FAILED", errorCode: "ENV_VAR_NOT_FOUND", failedBlock: { id: "greet" }, error: expect.stringContaining("{{SUFFIX}}") });
  });
});
