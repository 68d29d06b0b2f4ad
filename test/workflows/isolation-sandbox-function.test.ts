/**
 * The `workflow-sandbox` function, which runs user code where the runtime has no Web Workers
 * (hosted Supabase, `supabase start`), through the real functions host: who may call it, what it
 * answers, and the engine running a whole workflow through it with the client the `api` function
 * would use there (remote-sandbox.ts).
 */
import { describe, expect, it } from "vitest";
import { WorkflowError } from "../../supabase/functions/_shared/workflows/core/errors.ts";
import { runWorkflow } from "../../supabase/functions/_shared/workflows/runs/run-workflow.ts";
import { remoteSandbox, type RemoteCall } from "../../supabase/functions/_shared/workflows/sandbox/remote-sandbox.ts";
import { WorkflowBuilder } from "../../supabase/functions/_shared/workflows/state/state-builder.ts";
import { createTestUser } from "../helpers/clients.ts";
import { env } from "../helpers/env.ts";

const URL_ = `${env.url}/functions/v1/workflow-sandbox`;

function call(source: string, extra: Partial<RemoteCall> = {}): RemoteCall {
  return { kind: "function", source, valuesJson: "[]", timeoutMs: 5_000, memoryBytes: 32 * 1024 * 1024, maxResultChars: 1_000_000, ...extra };
}

async function post(body: unknown, key: string | null = env.serviceRoleKey): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(URL_, {
    method: "POST",
    headers: { ...(key ? { Authorization: `Bearer ${key}` } : {}), "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe("the workflow-sandbox function", () => {
  it("runs a call for the project's own functions and answers with its outcome", async () => {
    expect(await post(call("console.log('n', __refs[0]); return __refs[0] + 1;", { valuesJson: "[41]" }))).toEqual({ status: 200, body: { ok: true, resultJson: "42", stdout: "n 41" } });
    expect((await post(call("throw new TypeError('nope');"))).body).toEqual({ ok: false, code: "BLOCK_FAILED", message: "TypeError: nope (line 1)" });
    expect((await post(call("while (true) {}", { timeoutMs: 200 }))).body).toMatchObject({ ok: false, code: "SANDBOX_TIMEOUT" });
    expect((await post(call("return Deno.env.toObject();"))).body).toMatchObject({ ok: false, code: "BLOCK_FAILED", message: expect.stringContaining("Deno") });
  });

  it("refuses anyone but the service role, and calls past its limits", async () => {
    expect((await post(call("return 1;"), null)).status).toBe(401);
    expect(await post(call("return 1;"), env.anonKey)).toMatchObject({ status: 403, body: { code: "FORBIDDEN" } });
    const user = await createTestUser();
    expect((await post(call("return 1;"), user.accessToken)).status).toBe(403);
    expect(await post({ ...call("return 1;"), timeoutMs: 61_000 })).toMatchObject({ status: 400, body: { code: "INVALID_BODY" } });
    expect(await post({ ...call("return 1;"), memoryBytes: 1024 * 1024 * 1024 })).toMatchObject({ status: 400, body: { code: "INVALID_BODY" } });
  });

  it("runs a whole workflow's code for the engine, as the api function does where there are no workers", async () => {
    const sandbox = remoteSandbox({ url: URL_, key: env.serviceRoleKey });
    const state = new WorkflowBuilder()
      .block("start", "manual_trigger", { inputFormat: [{ name: "n", type: "number", value: 21 }, { name: "text", type: "string", value: "order-77" }] }, { name: "Start" })
      .block("double", "function", { code: "return <start.n> * 2;" }, { name: "Double" })
      .block("check", "condition", { conditions: [{ id: "big", kind: "if", expression: "<double.result> > 40" }, { id: "small", kind: "else" }] }, { name: "Check" })
      .block("route", "router", { value: "<start.text>", routes: [{ id: "order", operator: "matches", operand: "/^order-\\d+$/" }, { id: "other", operator: "default" }] }, { name: "Route" })
      .block("done", "response", { body: { doubled: "<double.result>", route: "<route.selectedRoute>" } }, { name: "Done" })
      .chain("start", "double")
      .edge("double", "check")
      .edge("check", "route", "condition-big")
      .edge("route", "done", "router-order")
      .build();
    const result = await runWorkflow({ workflow: state, trigger: { kind: "manual" }, services: { sandbox } });
    expect(result).toMatchObject({ success: true, response: { body: { doubled: 42, route: "order" } } });
  });

  it("lets the caller go at once when its run is cancelled", async () => {
    const sandbox = remoteSandbox({ url: URL_, key: env.serviceRoleKey });
    const controller = new AbortController();
    const pending = sandbox.run({ kind: "function", source: "while (true) {}", values: [], deadline: Date.now() + 1_000, memoryBytes: 32 * 1024 * 1024, signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const reason = new WorkflowError("CANCELLED", "the run was cancelled");
    const cancelledAt = Date.now();
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    expect(Date.now() - cancelledAt).toBeLessThan(500);
    // Let the abandoned call reach its own deadline before the next test uses the function.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  });
});
