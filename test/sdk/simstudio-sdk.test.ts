/**
 * Sim's own published TypeScript SDK (npm simstudio-ts-sdk, unchanged) pointed at Orbita's base
 * URL with an Orbita key: it executes (sync and async), polls the job, reads the usage limits and
 * the deployment status, and retries on 429 with executeWithRetry.
 */
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SimStudioClient, SimStudioError } from "simstudio-ts-sdk";
import { simulatedClientAddress } from "../helpers/clients.ts";
import { env } from "../helpers/env.ts";
import { WorkflowBuilder } from "../../supabase/functions/_shared/workflows/state/state-builder.ts";
import { createWorkspace, type TestWorkspace } from "../workflows/factories.ts";
import { apiKey, deployedWorkflow, setPlan, sql } from "../workflows/execute-api.ts";

// The SDK's fetch (node-fetch) goes through Node's global agent: give it a client address of its
// own, so the gateway's per-address limit is this suite's alone, as for every other suite.
http.globalAgent = new http.Agent({ localAddress: simulatedClientAddress() });

let workspace: TestWorkspace;
let workflowId: string;
let client: SimStudioClient;

beforeAll(async () => {
  workspace = await createWorkspace("Sim SDK");
  await setPlan(workspace.id, "enterprise", { sync_per_minute: 1000, async_per_minute: 1000 });
  workflowId = await deployedWorkflow(workspace.members.editor, workspace.id, "Greeter", new WorkflowBuilder()
    .block("api", "api_trigger", { inputFormat: [{ name: "name", type: "string" }] }, { name: "API" })
    .block("greet", "function", { code: "return 'Hello, ' + <api.name>;" }, { name: "Greet" })
    .chain("api", "greet").build());
  client = new SimStudioClient({ apiKey: (await apiKey(workspace.members.editor)).key, baseUrl: env.url });
});

afterAll(async () => {
  await sql.end();
});

describe("Sim's TypeScript SDK against Orbita", () => {
  it("executes synchronously", async () => {
    const result = await client.executeWorkflow(workflowId, { name: "Ana" });
    expect(result).toMatchObject({ success: true, output: { result: "Hello, Ana" } });
    expect(client.getRateLimitInfo()).toMatchObject({ limit: 1000 });
  });

  it("executes asynchronously and polls the job to completion", async () => {
    const queued = (await client.executeWorkflow(workflowId, { name: "Bo" }, { async: true })) as unknown as { taskId: string; status: string };
    expect(queued.status).toBe("queued");
    let job = await client.getJobStatus(queued.taskId);
    for (let attempt = 0; attempt < 100 && job.status !== "completed"; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      job = await client.getJobStatus(queued.taskId);
    }
    expect(job).toMatchObject({ status: "completed", output: { result: "Hello, Bo" } });
  });

  it("reads the usage limits and the deployment status", async () => {
    expect(await client.getUsageLimits()).toMatchObject({ success: true, rateLimit: { sync: { limit: 1000 }, authType: "api" }, usage: { plan: "enterprise" } });
    expect(await client.getWorkflowStatus(workflowId)).toMatchObject({ isDeployed: true, needsRedeployment: false });
    expect(await client.validateWorkflow(workflowId)).toBe(true);
  });

  it("reports refusals as SimStudioError with our code and status", async () => {
    const stranger = new SimStudioClient({ apiKey: `orb_${"0".repeat(48)}`, baseUrl: env.url });
    await expect(stranger.executeWorkflow(workflowId, {})).rejects.toMatchObject({ name: "SimStudioError", code: "UNAUTHORIZED", status: 401 });
  });

  it("retries on 429 with executeWithRetry until the bucket has a token again", async () => {
    // One run a minute: the first run takes the only token, the retry waits Retry-After (≤ 60 s)...
    // too long for a test, so the bucket holds 60 a minute and is emptied first: a token is back
    // within about a second.
    await setPlan(workspace.id, "enterprise", { sync_per_minute: 60, async_per_minute: 1000 });
    await Promise.all(Array.from({ length: 60 }, () => client.executeWorkflow(workflowId, { name: "x" }).catch((error: unknown) => error)));
    // Tokens come back at one a second while the burst goes on: send until one is refused.
    let refused: unknown = null;
    for (let attempt = 0; attempt < 100 && !(refused instanceof SimStudioError); attempt++) {
      refused = await client.executeWorkflow(workflowId, { name: "Cy" }).catch((error: unknown) => error);
    }
    expect(refused).toBeInstanceOf(SimStudioError);
    expect(refused).toMatchObject({ code: "RATE_LIMIT_EXCEEDED", status: 429 });
    expect(client.getRateLimitInfo()?.retryAfter).toBeGreaterThanOrEqual(1000);
    const result = await client.executeWithRetry(workflowId, { name: "Cy" }, {}, { maxRetries: 5, initialDelay: 500 });
    expect(result).toMatchObject({ success: true, output: { result: "Hello, Cy" } });
  }, 30_000);
});
