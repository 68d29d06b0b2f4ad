/**
 * The receivers in docs/webhooks.md, run exactly as written: the Node one with `node`, the Deno one
 * with the project's Deno. Real deliveries from the worker reach both as `delivered`; requests that
 * change one byte of the body, carry a stale or mismatched timestamp, are signed with another
 * secret or not at all are answered 401. A copy that stops verifying, or verifies too little,
 * fails here.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Sql } from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../platform/config/stack-config.ts";
import { signatureHeader } from "../../supabase/functions/_shared/workflows/outbound/webhooks/signing.ts";
import { createWorkspace, type TestWorkspace } from "./factories.ts";
import { deployedWorkflow, liftLimits, openDatabase, recordRuns } from "./logs-helpers.ts";
import { eventually, settledDelivery, subscribe } from "./webhooks-helpers.ts";

const SECRET = "whsec_docs_receiver_secret_0123456789";
const encoder = new TextEncoder();

/** The fenced code block of docs/webhooks.md in `language` that contains `marker`. */
function docsExample(language: string, marker: string): string {
  const docs = readFileSync(join(PROJECT_ROOT, "docs", "webhooks.md"), "utf8");
  const blocks = [...docs.matchAll(new RegExp("```" + language + "\\n([\\s\\S]*?)\\n```", "g"))].map((match) => match[1]);
  const found = blocks.filter((block) => block.includes(marker));
  if (found.length !== 1) throw new Error(`docs/webhooks.md has ${found.length} ${language} blocks with ${marker}`);
  return found[0];
}

/** A port free on loopback now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

interface RunningReceiver {
  url: string;
  process: ChildProcess;
  output: () => string;
}

/** Starts `command args` with the secret and a port in its environment; resolves once it answers. */
async function startReceiver(command: string, args: string[]): Promise<RunningReceiver> {
  const port = await freePort();
  const child = spawn(command, args, {
    cwd: PROJECT_ROOT,
    env: { ...process.env, ORBITA_WEBHOOK_SECRET: SECRET, PORT: String(port), NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const url = `http://127.0.0.1:${port}/orbita-hook`;
  await eventually(`${command} to listen on ${port}: ${output}`, async () => {
    if (child.exitCode !== null) throw new Error(`${command} exited: ${output}`);
    try {
      return (await fetch(url, { method: "POST", body: "{}" })).status;
    } catch {
      return undefined;
    }
  }, 60_000);
  return { url, process: child, output: () => output };
}

/** POSTs `body` to `url` with `headers` (a delivery's signature headers, or not); the status answered. */
async function post(url: string, body: string, headers: Record<string, string>): Promise<number> {
  const response = await fetch(url, { method: "POST", body, headers: { "content-type": "application/json", ...headers } });
  await response.arrayBuffer();
  return response.status;
}

describe.each([
  { runtime: "Node", language: "js", marker: "createServer", file: "receiver.mjs", command: () => process.execPath, args: (file: string) => [file] },
  {
    runtime: "Deno",
    language: "ts",
    marker: "Deno.serve",
    file: "receiver.ts",
    command: () => join(PROJECT_ROOT, "node_modules", ".bin", "deno"),
    args: (file: string) => ["run", "--allow-net", "--allow-env", "--no-lock", "--no-prompt", file],
  },
])("the $runtime receiver in docs/webhooks.md", ({ runtime, language, marker, file, command, args }) => {
  let dir: string;
  let receiver: RunningReceiver;
  let sql: Sql;
  let workspace: TestWorkspace;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "orbita-docs-receiver-"));
    writeFileSync(join(dir, file), docsExample(language, marker));
    receiver = await startReceiver(command(), args(join(dir, file)));
    sql = openDatabase();
    workspace = await createWorkspace(`Docs receiver ${runtime}`);
    await liftLimits(workspace.id);
  }, 90_000);

  afterAll(async () => {
    receiver?.process.kill();
    await sql?.end();
    rmSync(dir, { recursive: true, force: true });
  });

  it("takes the worker's real deliveries", async () => {
    const workflowId = await deployedWorkflow(workspace, `Announced to ${runtime}`);
    await subscribe(workspace.members.editor, workflowId, receiver.url, { secret: SECRET });
    const executionIds = await recordRuns(sql, [{ workflowId, trigger: "webhook" }, { workflowId, trigger: "schedule", status: "failed" }]);
    for (const executionId of executionIds) {
      const delivery = await settledDelivery(workspace.members.viewer, executionId);
      expect(delivery, receiver.output()).toMatchObject({ status: "delivered", attempts: 1, last_status_code: 204 });
    }
  });

  it("answers 401 to a changed byte, a stale or mismatched timestamp, another secret and no signature", async () => {
    const body = JSON.stringify({ id: "0d6c7a43-6f0e-4a77-9d8f-3f0f2b1c4a5e", type: "workflow.execution.completed", data: { status: "success" } });
    const signed = async (timestamp: number, secret = SECRET, bytes = body) => ({
      "service-timestamp": String(timestamp),
      "service-signature": await signatureHeader(secret, timestamp, encoder.encode(bytes)),
    });
    const now = Date.now();
    expect(await post(receiver.url, body, await signed(now))).toBe(204);
    expect(await post(receiver.url, body.replace("success", "Success"), await signed(now))).toBe(401);
    expect(await post(receiver.url, body, await signed(now - 6 * 60 * 1000))).toBe(401);
    expect(await post(receiver.url, body, await signed(now + 6 * 60 * 1000))).toBe(401);
    expect(await post(receiver.url, body, { ...(await signed(now)), "service-timestamp": String(now + 1) })).toBe(401);
    expect(await post(receiver.url, body, await signed(now, "another secret entirely"))).toBe(401);
    expect(await post(receiver.url, body, { "service-timestamp": String(now) })).toBe(401);
    // Inside the five minutes is still accepted.
    expect(await post(receiver.url, body, await signed(now - 4 * 60 * 1000))).toBe(204);
  });
});
