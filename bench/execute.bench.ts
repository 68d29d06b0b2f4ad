/**
 * Execute API bench (`npm run bench -- execute`), through the gateway as a client calls it:
 *
 * - one-block workflow, sync, with key check, rate limit and record (admit + finish), 32 in
 *   flight (goal ≥ 500 executions/s), beside the floor: the same load against the `api` function
 *   answering without the database (an execute whose id is no UUID: 404 before any SQL);
 * - a 40-block chain end to end (goal p50 ≤ 40 ms), no-op blocks and Function blocks;
 * - the first SSE frame of a streamed one-block run (goal p95 ≤ 50 ms);
 * - async: admitted (202) → completed, as the worker records it (goal p50 ≤ 60 ms, p95 ≤ 150 ms:
 *   the queue's NOTIFY wakes the worker at commit), beside a whole sync one-block run.
 *
 * The runs are the seeded builder's, on an Enterprise account with a 10-million-a-minute override,
 * so neither the rate limit nor the usage limit is what stops them.
 */
import { request as httpRequest } from "node:http";
import { SignJWT } from "jose";
import postgres from "postgres";
import { WorkflowBuilder } from "../supabase/functions/_shared/workflows/state/state-builder.ts";
import type { WorkflowState } from "../supabase/functions/_shared/workflows/state/state-schema.ts";
import { describeLoad, runLoad, type PreparedRequest } from "./gamification/load.ts";
import { ascending, percentile, report, requiredEnv, verdict } from "./bench-support.ts";
import { unlimitedDemoWorkspace } from "./demo-workspace.ts";

const DEMO_KEY = "orb_local_only_demo_key_000000000000000000000000";

/** An API trigger followed by `length` blocks of `type`. */
function chain(length: number, type: "variables" | "function"): WorkflowState {
  const builder = new WorkflowBuilder().block("api", "api_trigger", {}, { name: "API" });
  const ids = ["api"];
  for (let index = 1; index < length; index++) {
    builder.block(`b${index}`, type, type === "variables" ? { assignments: [] } : { code: `return ${index};` }, { name: `B${index}` });
    ids.push(`b${index}`);
  }
  return builder.chain(...ids).build();
}

/** Milliseconds until the first `data:` line of a streamed answer, and until its end. */
function firstFrame(url: string, body: string): Promise<{ first: number; total: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let first = -1;
    const outgoing = httpRequest(url, { method: "POST", headers: { "X-API-Key": DEMO_KEY, "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) } }, (response) => {
      let text = "";
      response.on("data", (chunk: Buffer) => {
        text += chunk.toString();
        if (first < 0 && text.includes("data: ")) first = performance.now() - started;
      });
      response.on("end", () => resolve({ first, total: performance.now() - started }));
      response.on("error", reject);
    });
    outgoing.on("error", reject);
    outgoing.end(body);
  });
}

/** Runs the execute bench and prints its figures. */
export async function run(): Promise<void> {
  const url = requiredEnv("SUPABASE_URL");
  const sql = postgres(requiredEnv("SUPABASE_DB_URL"), { max: 2, onnotice: () => {} });
  try {
    const { workspace, builder } = await unlimitedDemoWorkspace(sql);
    const deploy = async (name: string, state: WorkflowState): Promise<string> => {
      const [{ id }] = await sql<{ id: string }[]>`insert into public.workflows (workspace_id, name, state, created_by) values (${workspace}, ${name}, ${sql.json(state as never)}, ${builder}) returning id`;
      await sql.begin(async (tx) => {
        await tx`select set_config('request.jwt.claims', ${JSON.stringify({ sub: builder, role: "authenticated" })}, true), set_config('role', 'authenticated', true)`;
        await tx`select public.deploy_workflow(${id})`;
      });
      return id;
    };
    const oneBlock = await deploy("Bench one block", new WorkflowBuilder().block("api", "api_trigger", {}, { name: "API" }).block("done", "response", { body: { ok: true } }, { name: "Done" }).chain("api", "done").build());
    const noops = await deploy("Bench 40 no-op blocks", chain(40, "variables"));
    const functions = await deploy("Bench 40 Function blocks", chain(40, "function"));
    const streamed = await deploy("Bench streamed", new WorkflowBuilder().block("api", "api_trigger", {}, { name: "API" }).block("say", "function", { code: "return 'hi';" }, { name: "Say" }).chain("api", "say").build());

    // The gateway limits functions to 500 requests a minute per caller (JWT sub, else address): each
    // request carries one of 200 anon tokens of their own, which the execute endpoint ignores.
    const secret = new TextEncoder().encode(requiredEnv("SUPABASE_JWT_SECRET"));
    const tokens = await Promise.all(Array.from({ length: 200 }, (_, index) => new SignJWT({ role: "anon", sub: `00000000-0000-4000-8000-${String(index).padStart(12, "0")}` }).setProtectedHeader({ alg: "HS256" }).setExpirationTime("2h").sign(secret)));
    let turn = 0;
    const execute = (id: string, extra: Record<string, string> = {}): PreparedRequest => ({ method: "POST", url: `${url}/api/workflows/${id}/execute`, token: tokens[turn++ % tokens.length], headers: { "X-API-Key": DEMO_KEY, ...extra }, body: {} });
    const repeat = (request: () => PreparedRequest, count: number) => Array.from({ length: count }, request);

    console.log("Execute API, through the gateway (load generator, gateway, functions host and Postgres share the machine):");
    await runLoad(repeat(() => execute(oneBlock), 500), 32);
    await runLoad(repeat(() => execute("not-a-uuid"), 500), 32);
    const floor = await runLoad(repeat(() => execute("not-a-uuid"), 6000), 32);
    const ours = await runLoad(repeat(() => execute(oneBlock), 6000), 32);
    console.log(`  ${verdict(null)} floor: the api function answering without the database, 32 in flight: ${describeLoad(floor)}`);
    console.log(`  ${verdict(ours.perSecond >= 500)} one-block workflow, key check + rate limit + record, 32 in flight (goal ≥ 500/s): ${describeLoad(ours)}`);
    console.log(`    ratio to the floor: ${(ours.perSecond / floor.perSecond).toFixed(2)}`);
    report({
      bench: "execute", metric: "one-block workflow, sync execute (key, rate limit, record)", scale: "32 in flight", value: ours.perSecond, unit: "exec/s", higherIsBetter: true,
      baseline: { name: "same function, no database", value: floor.perSecond }, goal: { text: "≥ 500 exec/s", met: ours.perSecond >= 500 },
    });
    report({ bench: "execute", metric: "one-block workflow, sync execute p95", scale: "32 in flight", value: ours.p95, unit: "ms", higherIsBetter: false, baseline: { name: "same function, no database", value: floor.p95 } });

    const sequential = (id: string, count: number) => runLoad(repeat(() => execute(id), count), 1);
    await sequential(noops, 20);
    const noopChain = await sequential(noops, 300);
    console.log(`  ${verdict(noopChain.p50 <= 40)} 40-block chain of no-op blocks, end to end, 1 in flight (goal p50 ≤ 40 ms): ${describeLoad(noopChain)}`);
    const oneBlockSequential = await sequential(oneBlock, 300);
    report({
      bench: "execute", metric: "40-block no-op chain end to end, p50", scale: "1 in flight", value: noopChain.p50, unit: "ms", higherIsBetter: false,
      baseline: { name: "one-block workflow, same path", value: oneBlockSequential.p50 }, goal: { text: "p50 ≤ 40 ms", met: noopChain.p50 <= 40 },
    });
    await sequential(functions, 10);
    const functionChain = await sequential(functions, 100);
    console.log(`  ${verdict(null)} 40-block chain of Function blocks (a sandbox each), end to end, 1 in flight: ${describeLoad(functionChain)}`);

    const streamBody = JSON.stringify({ stream: true, selectedOutputs: ["say.result"] });
    for (let index = 0; index < 20; index++) await firstFrame(`${url}/api/workflows/${streamed}/execute`, streamBody);
    const frames: number[] = [];
    for (let index = 0; index < 300; index++) frames.push((await firstFrame(`${url}/api/workflows/${streamed}/execute`, streamBody)).first);
    report({
      bench: "execute", metric: "first SSE frame of a streamed one-block run, p95", scale: "1 in flight", value: percentile(ascending(frames), 0.95), unit: "ms", higherIsBetter: false,
      baseline: { name: "whole sync one-block run, p95", value: oneBlockSequential.p95 }, goal: { text: "p95 ≤ 50 ms", met: percentile(ascending(frames), 0.95) <= 50 },
    });
    console.log(`  ${verdict(percentile(ascending(frames), 0.95) <= 50)} first SSE frame of a streamed one-block run (goal p95 ≤ 50 ms): p50 ${percentile(ascending(frames), 0.5).toFixed(1)} ms, p95 ${percentile(ascending(frames), 0.95).toFixed(1)} ms`);

    const queuedToCompleted: number[] = [];
    for (let index = 0; index < 40; index++) {
      const response = await fetch(`${url}/api/workflows/${oneBlock}/execute`, { method: "POST", headers: { "X-API-Key": DEMO_KEY, "X-Execution-Mode": "async", "Content-Type": "application/json" }, body: "{}" });
      const { executionId } = (await response.json()) as { executionId: string };
      for (;;) {
        const [run] = await sql<{ status: string; ms: number }[]>`select status::text, extract(epoch from ended_at - created_at) * 1000 as ms from public.workflow_executions where id = ${executionId}`;
        if (run.status === "completed") {
          queuedToCompleted.push(Number(run.ms));
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    }
    const asyncP50 = percentile(ascending(queuedToCompleted), 0.5);
    const asyncP95 = percentile(ascending(queuedToCompleted), 0.95);
    const asyncMet = asyncP50 <= 60 && asyncP95 <= 150;
    report({
      bench: "execute", metric: "async run, admitted (202) → completed, p50", scale: "1 in flight", value: asyncP50, unit: "ms", higherIsBetter: false,
      baseline: { name: "whole sync one-block run, p50", value: oneBlockSequential.p50 }, goal: { text: "p50 ≤ 60 ms and p95 ≤ 150 ms", met: asyncMet },
    });
    console.log(`  ${verdict(asyncMet)} async, admitted (202) → completed by the worker, one at a time (goal p50 ≤ 60 ms, p95 ≤ 150 ms): p50 ${asyncP50.toFixed(0)} ms, p95 ${asyncP95.toFixed(0)} ms; a whole sync one-block run p50 ${oneBlockSequential.p50.toFixed(1)} ms (${(asyncP50 / oneBlockSequential.p50).toFixed(1)}×)`);
  } finally {
    await sql.end();
  }
}
