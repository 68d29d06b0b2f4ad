/**
 * JSON nested deeper than the documented cap (64 levels, docs/security.md) is refused with a 400 in
 * each surface's own shape before anything is admitted or charged: the execute API, an open
 * webhook trigger, the gamification API and auth's sign-up and sign-in. Each of these answered 500
 * at depths from 5,000 to 100,000, and the execute API also admitted, recorded and charged the run.
 */
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { WorkflowBuilder } from "../../supabase/functions/_shared/workflows/state/state-builder.ts";
import { MAX_JSON_DEPTH } from "../../supabase/functions/_shared/http/json-depth.ts";
import { env } from "../helpers/env.ts";
import { createWorkspace } from "../workflows/factories.ts";
import { apiKey, call, deployedWorkflow, setPlan, sql } from "../workflows/execute-api.ts";
import { createCity, createTechnician, type Technician } from "../gamification/factories.ts";
import { callApi } from "../gamification/api.ts";

/** `depth` arrays inside one another, as text (JSON.stringify would recurse). */
const deepArray = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;
/** `depth` objects inside one another under the key `a`. */
const deepObject = (depth: number) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;

let echoFlow: string;
let hookFlow: string;
let hookPath: string;
let key: string;
let technician: Technician;

/** Runs recorded for a workflow (a refused request records none, so charges none). */
async function recorded(workflowId: string): Promise<{ runs: number }> {
  const [row] = await sql<{ runs: number }[]>`select count(*)::int as runs from public.workflow_executions where workflow_id = ${workflowId}`;
  return row;
}

beforeAll(async () => {
  const workspace = await createWorkspace("Nesting depth");
  await setPlan(workspace.id, "enterprise", { sync_per_minute: 1000, async_per_minute: 1000 });
  const editor = workspace.members.editor;
  key = (await apiKey(editor)).key;
  echoFlow = await deployedWorkflow(editor, workspace.id, "Echo", new WorkflowBuilder()
    .block("api", "api_trigger", { inputFormat: [{ name: "items", type: "json" }] }, { name: "API" })
    .block("answer", "response", { status: 200, body: { items: "<api.items>" } }, { name: "Answer" })
    .edge("api", "answer")
    .build());
  hookPath = `deep-${randomUUID().slice(0, 8)}`;
  hookFlow = await deployedWorkflow(editor, workspace.id, "Open hook", new WorkflowBuilder()
    .block("hook", "generic_webhook", { path: hookPath }, { name: "Webhook 1" })
    .build());
  technician = await createTechnician(await createCity());
});

describe("JSON nested past the cap", () => {
  it("is refused by the execute API with 400 INVALID_BODY, and no run is admitted, recorded or charged", async () => {
    const before = await recorded(echoFlow);
    const answer = await call("POST", `/api/workflows/${echoFlow}/execute`, { headers: { "X-API-Key": key, "content-type": "application/json" }, raw: `{"items":${deepArray(100_000)}}` });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: "INVALID_BODY", maxDepth: MAX_JSON_DEPTH });
    expect(answer.body.error).toMatch(/more than 64 levels deep/);
    expect(await recorded(echoFlow)).toEqual(before);
  });

  it("is accepted up to the cap itself", async () => {
    // The body object is one level, so its field may nest one level less than the cap.
    const answer = await call("POST", `/api/workflows/${echoFlow}/execute`, { headers: { "X-API-Key": key, "content-type": "application/json" }, raw: `{"items":${deepArray(MAX_JSON_DEPTH - 1)}}` });
    expect(answer.status).toBe(200);
  });

  it("is refused by an open webhook trigger before any run starts", async () => {
    const answer = await call("POST", `/api/webhooks/trigger/${hookPath}`, { headers: { "content-type": "application/json" }, raw: `{"event":${deepArray(50_000)}}` });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: "INVALID_BODY", maxDepth: MAX_JSON_DEPTH });
    expect(await recorded(hookFlow)).toEqual({ runs: 0 });
  });

  it("is refused by the gamification API in its envelope", async () => {
    const answer = await callApi("POST", "/points", { token: technician.accessToken, raw: { text: `{"usuario_id":"${technician.id}","acao":"chamado_concluido","chamado_id":"${randomUUID()}","metadata":${deepObject(2_000)}}`, contentType: "application/json" } });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ success: false, error: { codigo: "PARAMETRO_INVALIDO" } });
  });

  it.each([
    ["sign-up", "/auth/v1/signup", (depth: number) => `{"email":"deep-${randomUUID()}@example.com","password":"a-long-password","data":${deepObject(depth)}}`],
    ["sign-in", "/auth/v1/token?grant_type=password", (depth: number) => `{"email":"nobody@example.com","password":"x","gotrue_meta_security":${deepObject(depth)}}`],
  ])("is refused by auth's %s with GoTrue's 400 bad_json, without authentication", async (_name, path, body) => {
    const response = await fetch(`${env.url}${path}`, { method: "POST", headers: { apikey: env.anonKey, "content-type": "application/json" }, body: body(5_000) });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: 400, error_code: "bad_json", msg: "Could not parse request body as JSON: exceeded max depth" });
  });
});
