/**
 * The outbound corpus, the stack's own ports: a workflow's API block, run by a signed-up user
 * through the stack's manual-run endpoint, tries every port the test stack listens on (pg-meta,
 * whose POST /query runs SQL as postgres, the mail catcher, the dashboard, the gateway's node half,
 * the gateway, PostgREST, the functions host, Postgres) in the spellings the guard must see
 * through, and is refused with OUTBOUND_BLOCKED before anything is sent; a stand-in on a port the
 * kernel chose stays reachable, as the local allow-list is meant for. The same holds in vitest's
 * own process, which `npm test` gives the stack's lists.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listeningPorts, loadConfig } from "../../platform/config/stack-config.ts";
import { checkOutboundUrl } from "../../supabase/functions/_shared/workflows/outbound/guard.ts";
import { WorkflowBuilder } from "../../supabase/functions/_shared/workflows/state/state-builder.ts";
import { startMisbehavingServer, type MisbehavingServer } from "../stand-ins/misbehaving-http.ts";
import { createWorkflow, createWorkspace, type TestWorkspace } from "../workflows/factories.ts";
import { liftLimits } from "../workflows/logs-helpers.ts";

const { ports } = loadConfig("test");
const own = listeningPorts(ports);

/** The stack's own URLs: every port at 127.0.0.1, and pg-meta's /query in every spelling of loopback. */
const OWN_URLS = [
  ...own.map((port) => `http://127.0.0.1:${port}/`),
  ...["127.0.0.2", "localhost", "[::1]", "[::ffff:127.0.0.1]", "0x7f000001", "2130706433", "127.1", "0.0.0.0"].map((host) => `http://${host}:${ports.pgMeta}/query`),
  `http://127.0.0.1:${ports.gatewayInner}/token?grant_type=password`,
];

let target: MisbehavingServer;
let workspace: TestWorkspace;
beforeAll(async () => {
  target = await startMisbehavingServer();
  workspace = await createWorkspace("Outbound to the stack's own ports");
  // Manual runs spend the plan's synchronous rate limit (5 a minute on Free); this suite runs more.
  await liftLimits(workspace.id);
});
afterAll(async () => {
  await target.close();
});

/** API trigger → Fetch (POST, as the repro's SQL) → Done, and Failed on Fetch's error edge. */
function fetchFlow(url: string) {
  return new WorkflowBuilder()
    .block("start", "api_trigger", {}, { name: "Start" })
    .block("fetch", "api", { url, method: "POST", headers: { "content-type": "application/json", "x-orbita-service": "auth" }, body: { query: "select current_user" }, retries: 0 }, { name: "Fetch" })
    .block("done", "response", { body: { data: "<fetch.data>", status: "<fetch.status>" } }, { name: "Done" })
    .block("failed", "response", { status: 502, body: { error: "<fetch.error>", code: "<fetch.code>" } }, { name: "Failed" })
    .edge("start", "fetch")
    .edge("fetch", "done")
    .edge("fetch", "failed", "error")
    .build();
}

async function runDraft(url: string): Promise<Record<string, unknown>> {
  const editor = workspace.members.editor;
  const id = await createWorkflow(editor, workspace.id, `Own ports ${url}`, fetchFlow(url) as never);
  const { data, error, response } = await editor.client.functions.invoke(`workflow-run/${id}`, { body: {} });
  expect(error, url).toBeNull();
  expect(response?.status, url).toBe(200);
  return data as Record<string, unknown>;
}

describe("a workflow calling the stack's own services", () => {
  it("reaches a stand-in on a port the kernel chose", async () => {
    expect(own).not.toContain(target.port);
    const body = await runDraft(`${target.url}/echo`);
    expect(body.output).toMatchObject({ status: 200, data: { status: 200, data: { method: "POST" } } });
  });

  it.each(OWN_URLS)("is refused at %s with OUTBOUND_BLOCKED, nothing sent", async (url) => {
    const body = await runDraft(url);
    expect(body.output).toMatchObject({
      status: 502,
      data: { code: "OUTBOUND_BLOCKED", error: expect.stringMatching(/is listed in OUTBOUND_DENIED_ADDRESSES \(the local stack's own services\), which workflows may not call$/) },
    });
  });

  it.each(OWN_URLS)("is refused at %s in vitest's own process too", async (url) => {
    expect(await checkOutboundUrl(url)).toMatchObject({ ok: false, code: "OUTBOUND_BLOCKED" });
  });

  it("is refused at a loopback port below 1024, which the local allow-list leaves closed", async () => {
    const body = await runDraft("http://127.0.0.1:22/");
    expect(body.output).toMatchObject({ status: 502, data: { code: "OUTBOUND_BLOCKED", error: expect.stringContaining("127.0.0.1 is a loopback address, which workflows may not call on port 22") } });
  });
});
