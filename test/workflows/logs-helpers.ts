/**
 * Helpers of the logs and webhook tests: calling the logs API, and runs for them to read. Runs are
 * recorded through the real lifecycle functions (admit_workflow_run, finish_workflow_run) as the
 * service role, the way the execute endpoint and the workers record them, without depending on
 * either. Runs admitted in one call of `recordRuns` with `sameStart` share one transaction, hence
 * one start time (Postgres's now()): what the keyset must order by id.
 */
import postgres, { type Sql } from "postgres";
import { env } from "../helpers/env.ts";
import { fetchFrom, serviceClient, simulatedClientAddress } from "../helpers/clients.ts";
import { WorkflowBuilder } from "../../supabase/functions/_shared/workflows/state/state-builder.ts";
import { specViolations } from "../gamification/openapi.ts";
import { createWorkflow, type TestWorkspace } from "./factories.ts";

/** How one run goes. */
export interface RunSpec {
  workflowId: string;
  trigger?: "api" | "webhook" | "schedule" | "manual" | "chat";
  status?: "completed" | "failed" | "cancelled";
  durationMs?: number;
  models?: { model: string; promptTokens: number; completionTokens: number; ownKey?: boolean }[];
  output?: unknown;
  traceSpans?: unknown[];
  files?: unknown[];
  /** Required for the api trigger. */
  apiKey?: string;
  /** Required for the manual trigger. */
  userId?: string;
}

/** A connection to the test stack's database, for recording runs. */
export function openDatabase(): Sql {
  return postgres(env.dbUrl, { max: 2, onnotice: () => {} });
}

async function asServiceRole(sql: Sql, work: (tx: Sql) => Promise<string[]>): Promise<string[]> {
  return (await sql.begin(async (tx) => {
    await tx`select set_config('role', 'service_role', true), set_config('request.jwt.claims', '{"role": "service_role"}', true)`;
    return await work(tx as unknown as Sql);
  })) as string[];
}

async function admit(tx: Sql, spec: RunSpec): Promise<string> {
  const [row] = await tx<{ answer: { executionId?: string; code?: string } }[]>`
    select public.admit_workflow_run(${spec.workflowId}::uuid, ${spec.trigger ?? "webhook"}, 'sync', ${spec.apiKey ?? null}, ${spec.userId ?? null}::uuid) as answer`;
  if (!row.answer.executionId) throw new Error(`admit refused: ${JSON.stringify(row.answer)}`);
  return row.answer.executionId;
}

async function finish(tx: Sql, id: string, spec: RunSpec): Promise<void> {
  const status = spec.status ?? "completed";
  const error = status === "failed" ? { message: "It broke", code: "BLOCK_FAILED", failedBlock: { id: "done", name: "Done", type: "response" } } : null;
  await tx`select public.finish_workflow_run(${id}::uuid, ${status}, ${tx.json((spec.output ?? { ok: true }) as never)}, ${error === null ? null : tx.json(error)},
    ${tx.json((spec.traceSpans ?? [{ blockId: "done", status: "success" }]) as never)}, ${spec.files ? tx.json(spec.files as never) : null},
    ${spec.models ? tx.json(spec.models) : null}, ${spec.durationMs ?? 10})`;
}

/**
 * Records `specs` as finished runs and returns their execution ids in order. With `sameStart`
 * they start (and end) at one instant; otherwise each is its own transaction, one after another.
 */
export async function recordRuns(sql: Sql, specs: RunSpec[], { sameStart = false } = {}): Promise<string[]> {
  if (sameStart) {
    return await asServiceRole(sql, async (tx) => {
      const ids: string[] = [];
      for (const spec of specs) ids.push(await admit(tx, spec));
      for (const [index, spec] of specs.entries()) await finish(tx, ids[index], spec);
      return ids;
    });
  }
  const ids: string[] = [];
  for (const spec of specs) ids.push(...(await asServiceRole(sql, async (tx) => [await admit(tx, spec)])));
  for (const [index, spec] of specs.entries()) await asServiceRole(sql, async (tx) => (await finish(tx, ids[index], spec), []));
  return ids;
}

/** A deployed one-block-and-a-response workflow in the workspace, made by its editor. */
export async function deployedWorkflow(workspace: TestWorkspace, name: string, folderId: string | null = null): Promise<string> {
  const state = new WorkflowBuilder()
    .block("hook", "generic_webhook", {}, { name: "Hook" })
    .block("done", "response", { body: "ok" }, { name: "Done" })
    .chain("hook", "done")
    .build();
  const id = await createWorkflow(workspace.members.editor, workspace.id, name, state);
  const editor = workspace.members.editor.client;
  if (folderId !== null) {
    const moved = await editor.from("workflows").update({ folder_id: folderId }).eq("id", id);
    if (moved.error) throw moved.error;
  }
  const deployed = await editor.rpc("deploy_workflow", { p_workflow_id: id });
  if (deployed.error) throw deployed.error;
  return id;
}

/** The billing account paying for the workspace. */
export async function billingAccountOf(workspaceId: string): Promise<string> {
  const { data, error } = await serviceClient().from("workspaces").select("billing_account_id").eq("id", workspaceId).single<{ billing_account_id: string }>();
  if (error) throw error;
  return data.billing_account_id;
}

/**
 * Gives the workspace's account its own figures (service role): by default run rate limits and a
 * usage limit no test reaches, so tests record runs freely; `logsPerMinute` lifts the logs API's too.
 */
export async function liftLimits(workspaceId: string, { logsPerMinute }: { logsPerMinute?: number } = {}): Promise<void> {
  const lifted = await serviceClient().from("billing_account_overrides").upsert({
    billing_account_id: await billingAccountOf(workspaceId), sync_per_minute: 100_000, async_per_minute: 100_000, usage_limit: 100_000,
    // recordRuns with sameStart holds all its runs open in one transaction, past Free's 10 at once.
    concurrent_runs: 1_000, logs_per_minute: logsPerMinute ?? null,
  });
  if (lifted.error) throw lifted.error;
}

/** One simulated device per test file (the gateway budgets requests per client address). */
const clientFetch = fetchFrom(simulatedClientAddress());

/** A logs API answer. */
export interface LogsResponse {
  status: number;
  headers: Headers;
  body: Record<string, unknown> & { data?: LogEntry[]; nextCursor?: string | null; error?: string; code?: string };
}

/** A log entry as the API lists it. */
export interface LogEntry {
  id: string;
  executionId: string;
  workflowId: string;
  level: string;
  trigger: string;
  startedAt: string;
  endedAt: string | null;
  totalDurationMs: number | null;
  cost: { total: number } & Record<string, unknown>;
  files: unknown;
  /** Why the run failed; null unless it did. */
  error: { code: string; message: string; blockId: string | null; blockName: string | null } | null;
  workflow?: { id: string; name: string; description: string };
  executionData?: { traceSpans?: unknown[]; finalOutput?: unknown };
}

/** The operation of docs/openapi.yaml that a path under /api/v1/logs is served by. */
function operationOf(path: string): string {
  if (path === "") return "/api/v1/logs";
  return path.startsWith("/executions/") ? "/api/v1/logs/executions/{executionId}" : "/api/v1/logs/{id}";
}

/**
 * GET `path` (under /api/v1/logs) with `key` in x-api-key. Every answer is checked against
 * docs/openapi.yaml (its status must be documented and its body must match), so the document and
 * the API cannot drift.
 */
export async function getLogs(key: string | null, path: string, query: Record<string, string> = {}, send = clientFetch): Promise<LogsResponse> {
  const url = new URL(`${env.url}/api/v1/logs${path}`);
  for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
  const response = await send(url, { headers: key === null ? {} : { "x-api-key": key } });
  const answer = { status: response.status, headers: response.headers, body: (await response.json()) as LogsResponse["body"] };
  const violations = specViolations("GET", operationOf(path), answer);
  if (violations.length > 0) throw new Error(`GET /api/v1/logs${path} answered ${answer.status} against docs/openapi.yaml: ${violations.join("; ")}`);
  return answer;
}

