/**
 * Helpers for the execute API's suites: deployed workflows, API keys, plans, calls through the
 * gateway from a client address of the suite's own (so the gateway's per-address limit of other
 * suites is untouched), the run records in SQL, and answers checked against docs/openapi.yaml.
 */
import postgres from "postgres";
import { expect } from "vitest";
import { fetchFrom, simulatedClientAddress, type TestUser } from "../helpers/clients.ts";
import { env } from "../helpers/env.ts";
import { specViolations } from "../gamification/openapi.ts";
import type { ApiAnswer } from "../gamification/api.ts";
import type { WorkflowStateInput } from "../../supabase/functions/_shared/workflows/state/state-schema.ts";
import { createWorkflow } from "./factories.ts";

/** Postgres as the platform's admin (the tests read records and move meters with it). */
export const sql = postgres(env.dbUrl, { max: 2, onnotice: () => {} });

const clientFetch = fetchFrom(simulatedClientAddress());

/** Creates and deploys a workflow as `user`; returns its id. */
export async function deployedWorkflow(user: TestUser, workspaceId: string, name: string, state: WorkflowStateInput): Promise<string> {
  const id = await createWorkflow(user, workspaceId, name, state);
  const { error } = await user.client.rpc("deploy_workflow", { p_workflow_id: id });
  if (error) throw error;
  return id;
}

/** A personal API key of `user`, or a workspace key when `workspaceId` is given (admins). */
export async function apiKey(user: TestUser, workspaceId?: string): Promise<{ id: string; key: string }> {
  const { data, error } = await user.client.rpc("create_api_key", { p_name: "tests", ...(workspaceId ? { p_workspace_id: workspaceId } : {}) }).single<{ id: string; key: string }>();
  if (error) throw error;
  return data;
}

/** Puts the workspace's billing account on `plan`, with overrides (Enterprise agreements, raised limits). */
export async function setPlan(workspaceId: string, plan: "free" | "pro" | "team" | "enterprise", overrides: { sync_per_minute?: number; async_per_minute?: number; usage_limit?: number; concurrent_runs?: number } = {}): Promise<string> {
  const [{ id }] = await sql<{ id: string }[]>`select billing_account_id as id from public.workspaces where id = ${workspaceId}`;
  await sql`update public.billing_accounts set plan = ${plan} where id = ${id}`;
  if (Object.keys(overrides).length > 0) {
    await sql`insert into public.billing_account_overrides ${sql({ billing_account_id: id, ...overrides })}
      on conflict (billing_account_id) do update set sync_per_minute = excluded.sync_per_minute, async_per_minute = excluded.async_per_minute,
        usage_limit = excluded.usage_limit, concurrent_runs = excluded.concurrent_runs`;
  }
  return id;
}

/** An answer: status, headers, the body parsed as JSON when it is JSON, and its text. */
export interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown> & { [key: string]: unknown };
  text: string;
}

/** Sends a request through the gateway and reads the whole answer. */
export async function call(method: string, path: string, options: { headers?: Record<string, string>; body?: unknown; raw?: string; signal?: AbortSignal } = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  let body: string | undefined = options.raw;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["content-type"] ??= "application/json";
  }
  const response = await clientFetch(`${env.url}${path}`, { method, headers, body, signal: options.signal });
  const text = await response.text();
  let parsed: Record<string, unknown> = {};
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // Not JSON (an event stream, a text body).
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}

/** POST /api/workflows/{id}/execute with a key. */
export function execute(workflowId: string, key: string | null, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  return call("POST", `/api/workflows/${workflowId}/execute`, { headers: { ...(key ? { "X-API-Key": key } : {}), ...headers }, body });
}

/** Checks an answer against docs/openapi.yaml's operation `method path`. */
export function expectDocumented(method: string, path: string, answer: Answer): void {
  expect(specViolations(method, path, { status: answer.status, body: answer.body, headers: answer.headers } as unknown as ApiAnswer)).toEqual([]);
}

/** One run's record, as the lifecycle functions left it. */
export async function record(executionId: string): Promise<Record<string, unknown> & { status: string; level: string }> {
  const [row] = await sql<(Record<string, unknown> & { status: string; level: string })[]>`
    select id, status::text, level::text, trigger::text, mode::text, error_code, error_message, failed_block, output, cost, cost_total::float8 as cost_total,
      duration_ms, started_at, ended_at, trace_spans, files, deployment_id, deployment_version, snapshot_id, attempt, response
    from public.workflow_executions where id = ${executionId}`;
  return row;
}

/** Polls until `check` holds (the async worker, a cancellation), failing after `timeoutMs`. */
export async function eventually<T>(what: string, read: () => Promise<T>, check: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: last ${JSON.stringify(value)?.slice(0, 500)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The `data:` frames of an event stream, parsed (`[DONE]` kept as the string). */
export function sseFrames(text: string): unknown[] {
  return text.split("\n\n").map((block) => block.split("\n").filter((line) => line.startsWith("data: ")).map((line) => line.slice(6)).join("\n"))
    .filter((data) => data !== "")
    .map((data) => (data === "[DONE]" ? data : JSON.parse(data)));
}
