/**
 * Isolation bench (`npm run bench -- isolation`), through the real stack (gateway → `api` function
 * → its sandbox threads): a tenant's one-block Function run, idle and while another tenant's
 * parallel of twice the pool's width spins until its timeout (goal: busy p95 within 2× of idle
 * p95), and a parallel of N independent busy Function branches against one branch (goal: about the
 * time of one while N is at most the account's share of the pool). scripts/bench.ts starts the
 * stack and exports its coordinates.
 */
import { cpus } from "node:os";
import { createClient, type SupabaseClient } from "@supabase/supabase-js";
import WebSocket from "ws";
import { sandboxPoolSize } from "../supabase/functions/_shared/workflows/sandbox/sandbox-choice.ts";
import { accountShare } from "../supabase/functions/_shared/workflows/sandbox/fair-queue.ts";
import { WorkflowBuilder } from "../supabase/functions/_shared/workflows/state/state-builder.ts";
import type { WorkflowStateInput } from "../supabase/functions/_shared/workflows/state/state-schema.ts";
import { describeLoad, runLoad, type PreparedRequest } from "./gamification/load.ts";
import { report, requiredEnv, verdict } from "./bench-support.ts";

/** supabase-js options for Node 20, which has no global WebSocket for its realtime transport. */
const CLIENT_OPTIONS = {
  auth: { persistSession: false, autoRefreshToken: false },
  realtime: { transport: WebSocket as unknown as typeof globalThis.WebSocket },
};

/** A tenant: a workspace, its owner's client, and the sessions of its members (the owner first). */
interface Tenant {
  client: SupabaseClient;
  tokens: string[];
  workspaceId: string;
}

async function signedIn(url: string, anonKey: string, admin: SupabaseClient, label: string): Promise<{ id: string; client: SupabaseClient; token: string }> {
  const email = `bench-${label}-${crypto.randomUUID()}@example.test`;
  const password = `pw-${crypto.randomUUID()}`;
  const created = await admin.auth.admin.createUser({ email, password, email_confirm: true });
  if (created.error) throw created.error;
  const client = createClient(url, anonKey, CLIENT_OPTIONS);
  const session = await client.auth.signInWithPassword({ email, password });
  if (session.error) throw session.error;
  return { id: created.data.user.id, client, token: session.data.session.access_token };
}

/**
 * A workspace with `members` signed-in editors (its owner included). Each manual run reads the
 * draft through the data API as its caller, whose gateway budget is 200 requests a minute, so the
 * load is spread over several members, as a team's would be.
 */
async function tenant(url: string, anonKey: string, admin: SupabaseClient, name: string, members: number): Promise<Tenant> {
  const owner = await signedIn(url, anonKey, admin, name);
  const workspace = await owner.client.rpc("create_workspace", { p_name: `Bench ${name}` }).single<{ id: string }>();
  if (workspace.error) throw workspace.error;
  const others = await Promise.all(Array.from({ length: members - 1 }, (_, index) => signedIn(url, anonKey, admin, `${name}-${index}`)));
  if (others.length > 0) {
    // People join a workspace by accepting an invitation (docs/workflows.md, "Members").
    const { error } = await owner.client.from("workspace_invitations").insert(others.map((member) => ({ workspace_id: workspace.data.id, user_id: member.id, role: "editor" })));
    if (error) throw error;
    for (const member of others) {
      const accepted = await member.client.rpc("accept_workspace_invitation", { p_workspace_id: workspace.data.id });
      if (accepted.error) throw accepted.error;
    }
  }
  // Manual runs spend the plan's synchronous rate limit, which the bench's hundreds of runs would pass.
  const account = await admin.from("workspaces").select("billing_account_id").eq("id", workspace.data.id).single<{ billing_account_id: string }>();
  if (account.error) throw account.error;
  const lifted = await admin.from("billing_account_overrides").upsert({ billing_account_id: account.data.billing_account_id, sync_per_minute: 100_000, usage_limit: 100_000 });
  if (lifted.error) throw lifted.error;
  return { client: owner.client, tokens: [owner.token, ...others.map((member) => member.token)], workspaceId: workspace.data.id };
}

async function workflow(owner: Tenant, name: string, state: WorkflowStateInput): Promise<string> {
  const { data, error } = await owner.client.from("workflows").insert({ workspace_id: owner.workspaceId, name, state }).select("id").single<{ id: string }>();
  if (error) throw error;
  return data.id;
}

function single(code: string, timeoutMs?: number): WorkflowStateInput {
  return new WorkflowBuilder()
    .block("start", "manual_trigger", {}, { name: "Start" })
    .block("work", "function", { code, ...(timeoutMs ? { timeoutMs } : {}) }, { name: "Work" })
    .chain("start", "work")
    .build();
}

function fanOut(branches: number, code: string, timeoutMs?: number): WorkflowStateInput {
  return new WorkflowBuilder()
    .block("start", "manual_trigger", {}, { name: "Start" })
    .parallel("fan", { nodes: ["work"], parallelType: "count", count: branches }, { name: "Fan" })
    .block("work", "function", { code, ...(timeoutMs ? { timeoutMs } : {}) }, { name: "Work" })
    .edge("start", "fan")
    .edge("fan", "work", "parallel-start")
    .build();
}

/** `count` manual runs of the workflow, sent by the tenant's members in turn. */
function runRequests(url: string, owner: Tenant, workflowId: string, count: number): PreparedRequest[] {
  return Array.from({ length: count }, (_, index) => ({ method: "POST" as const, url: `${url}/api/workflows/${workflowId}/run`, token: owner.tokens[index % owner.tokens.length], body: {} }));
}

/** Runs a workflow once through HTTP and returns the run's own duration (metadata.duration). */
async function runOnce(url: string, owner: Tenant, workflowId: string): Promise<number> {
  const response = await fetch(`${url}/api/workflows/${workflowId}/run`, { method: "POST", headers: { Authorization: `Bearer ${owner.tokens[0]}`, "content-type": "application/json" }, body: "{}" });
  const body = (await response.json()) as { success: boolean; metadata: { duration: number }; error?: string };
  if (!body.success) throw new Error(`bench run failed: ${body.error}`);
  return body.metadata.duration;
}

/** Measures and prints the figures. */
export async function run(): Promise<void> {
  const url = requiredEnv("SUPABASE_URL");
  const anonKey = requiredEnv("SUPABASE_ANON_KEY");
  const admin = createClient(url, requiredEnv("SUPABASE_SERVICE_ROLE_KEY"), CLIENT_OPTIONS);
  const poolSize = sandboxPoolSize(process.env.WORKFLOW_SANDBOX_WORKERS, cpus().length);
  console.log(`Workflow isolation (HTTP through the gateway and the api function; sandbox pool of ${poolSize} threads on ${cpus().length} cores)`);

  const spinner = await tenant(url, anonKey, admin, "spinner", 1);
  const quiet = await tenant(url, anonKey, admin, "quiet", 10);
  const oneBlock = await workflow(quiet, "One block", single("return 6 * 7;"));
  const share = accountShare(poolSize);
  const spinning = await workflow(spinner, "Spinners", fanOut(2 * poolSize, "while (true) {}", 20_000));

  // Idle runs before and after the spinner, so the machine's drift over the minute does not
  // count for or against the spinner; the busy figure is compared with their mean.
  await runLoad(runRequests(url, quiet, oneBlock, 30), 1);
  const before = await runLoad(runRequests(url, quiet, oneBlock, 150), 1);
  console.log(`  · one-block Function run, idle: ${describeLoad(before)}`);
  // The spinner's parallel of twice the pool's width holds every thread its account may hold (its
  // share, half the pool) until its timeout; the quiet tenant's runs go on beside it.
  const spin = fetch(`${url}/api/workflows/${spinning}/run`, { method: "POST", headers: { Authorization: `Bearer ${spinner.tokens[0]}`, "content-type": "application/json" }, body: "{}" });
  await new Promise((resolve) => setTimeout(resolve, 500));
  const busy = await runLoad(runRequests(url, quiet, oneBlock, 200), 1);
  const spun = (await (await spin).json()) as { errorCode?: string };
  const after = await runLoad(runRequests(url, quiet, oneBlock, 150), 1);
  console.log(`  · the same, idle again after the spinner ended (${spun.errorCode ?? "?"}): ${describeLoad(after)}`);
  const idleP95 = (before.p95 + after.p95) / 2;
  const ratio = busy.p95 / idleP95;
  console.log(`  ${verdict(ratio <= 2)} the same while another tenant's parallel of ${2 * poolSize} Functions spins until its 20 s timeout (goal p95 ≤ 2× idle): ${describeLoad(busy)}; p95 ${ratio.toFixed(2)}× idle (${idleP95.toFixed(1)} ms)`);
  report({
    bench: "isolation", metric: `one-block Function run p95 while another tenant's ${2 * poolSize}-wide parallel spins`, scale: "1 in flight", value: busy.p95, unit: "ms", higherIsBetter: false,
    baseline: { name: "same run, idle", value: idleP95 }, goal: { text: "≤ 2× idle", met: ratio <= 2 },
  });

  const branchMs = 500;
  const busyCode = `const started = Date.now(); while (Date.now() - started < ${branchMs}) {} return 1;`;
  const one = await workflow(quiet, "One busy branch", fanOut(1, busyCode));
  await runOnce(url, quiet, one);
  const oneMs = await runOnce(url, quiet, one);
  console.log(`  · parallel of 1 Function busy for ${branchMs} ms: ${oneMs} ms`);
  for (const branches of [...new Set([2, share, poolSize])]) {
    const id = await workflow(quiet, `${branches} busy branches`, fanOut(branches, busyCode));
    await runOnce(url, quiet, id);
    const samples = [await runOnce(url, quiet, id), await runOnce(url, quiet, id), await runOnce(url, quiet, id)].sort((a, b) => a - b);
    const median = samples[1];
    const fits = branches <= share;
    const goal = fits ? `goal ≤ 1.5× one branch, N ≤ the account's share of ${share} threads` : `N over the account's share: ${Math.ceil(branches / share)} rounds expected`;
    report({
      bench: "isolation", metric: `parallel of ${branches} busy Function branches`, scale: `${branches} branches`, value: median, unit: "ms", higherIsBetter: false,
      baseline: { name: "one such branch", value: oneMs }, goal: fits ? { text: "≤ 1.5× one branch", met: median <= 1.5 * oneMs } : undefined,
    });
    console.log(`  ${fits ? verdict(median <= 1.5 * oneMs) : "·"} parallel of ${branches} such branches (${goal}): ${median} ms (${(median / oneMs).toFixed(2)}× one branch; runs ${samples.join(", ")} ms)`);
  }
}
