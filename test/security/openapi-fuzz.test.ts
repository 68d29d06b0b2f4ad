/**
 * Fuzz generated from docs/openapi.yaml: for every operation the document describes, fast-check
 * generates requests from its parameters and request body schema (test/security/openapi-inputs.ts),
 * conforming or mutated into malformed and boundary values, with the right credentials or a
 * forged, expired, tampered or missing one. Every answer must:
 * - not be a 5xx (a 502/504 the operation documents for an upstream service excepted) nor a
 *   dropped connection;
 * - have a status the operation documents, in a content type it documents, and a JSON body that
 *   validates against that answer's schema;
 * - on a refusal (4xx), leave this suite's tenants exactly as they were: runs, idempotency keys,
 *   chat turns and codes, points, history and badges, proposals and their audit, passwords and
 *   stored PDFs (a refusal that names an executionId records that run as failed, as documented).
 * A new operation in the document is fuzzed with no change here; the first test fails if an
 * operation has no credentials or known values to reach it with.
 */
import fc from "fast-check";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fetchFrom, serviceClient, simulatedClientAddress, type TestUser } from "../helpers/clients.ts";
import { env } from "../helpers/env.ts";
import { createCall, createCity, createTechnician, type Technician } from "../gamification/factories.ts";
import { specViolations } from "../gamification/openapi.ts";
import { createCustomer, createPortalUser, createProduct, createProposal } from "../portal/factories.ts";
import { createWorkflow, createWorkspace } from "../workflows/factories.ts";
import { liftLimits } from "../workflows/logs-helpers.ts";
import { WorkflowBuilder } from "../../supabase/functions/_shared/workflows/state/state-builder.ts";
import { type GeneratedRequest, type KnownValues, type Operation, operations, requests } from "./openapi-inputs.ts";
import { type BadCredential, badTokens, UNISSUED_KEY } from "./tokens.ts";

/** Generated requests per operation; ORBITA_FUZZ_RUNS raises it for a deeper run by hand. */
const RUNS = Number(process.env.ORBITA_FUZZ_RUNS ?? 12);

const sql = postgres(env.dbUrl, { max: 2, onnotice: () => {} });
const all = operations();

let technicians: Technician[];
let seller: TestUser;
let admin: TestUser;
let editor: TestUser;
let workspaceId: string;
let workflowIds: string[];
let chatId: string;
let apiKey: string;
let proposalIds: string[];
let known: KnownValues;
let bad: Record<string, Record<Exclude<BadCredential, "unissued-key">, string>>;
let turn = 0;

/** One of `users`, taken in turn, so no one user's per-minute budget runs out. */
const next = <T>(users: T[]): T => users[turn++ % users.length];

/** The right credentials of `operation`, from the security schemes it documents and the part of the product it is in. */
function credentials(operation: Operation): Record<string, string> | null {
  const schemes = operation.security;
  if (operation.tags.includes("gamificacao")) return { authorization: `Bearer ${next(technicians).accessToken}` };
  if (operation.tags.includes("portal")) {
    if (schemes.includes("")) return { apikey: env.anonKey };
    return { apikey: env.anonKey, authorization: `Bearer ${(operation.path === "/admin-reset-password" ? admin : seller).accessToken}` };
  }
  if (schemes.includes("workflowApiKey")) return { "x-api-key": apiKey };
  if (schemes.includes("supabaseJwt")) return { authorization: `Bearer ${editor.accessToken}` };
  if (schemes.includes("")) return {};
  return null;
}

/** The same request with a credential that must be refused, for operations that need one. */
function spoiled(operation: Operation, headers: Record<string, string>, kind: BadCredential): Record<string, string> {
  const subject = operation.tags.includes("gamificacao") ? technicians[0].id : operation.tags.includes("portal") ? seller.id : editor.id;
  if (headers["x-api-key"]) return { ...headers, "x-api-key": kind === "unissued-key" ? UNISSUED_KEY : `${apiKey.slice(0, -1)}${apiKey.endsWith("0") ? "1" : "0"}` };
  if (!headers.authorization) return headers;
  if (kind === "unissued-key") return Object.fromEntries(Object.entries(headers).filter(([name]) => name !== "authorization"));
  return { ...headers, authorization: `Bearer ${bad[subject][kind]}` };
}

/** Everything a refused request must leave as it was, for this suite's tenants only (other files run beside it). */
async function fingerprint(): Promise<Record<string, string>> {
  const portalUsers = [seller.id, admin.id];
  const [row] = await sql<Record<string, string>[]>`
    select
      (select count(*) from public.workflow_executions where workspace_id = ${workspaceId})::text as executions,
      (select count(*) from workflows_private.idempotency_keys where workflow_id = any(${workflowIds}::uuid[]))::text as idempotency_keys,
      (select count(*) from workflows_private.chat_turns where chat_id = ${chatId})::text as chat_turns,
      (select count(*) from workflows_private.chat_codes where chat_id = ${chatId})::text as chat_codes,
      (select count(*) from public.historico_pontos where usuario_id = any(${technicians.map((t) => t.id)}::uuid[]))::text as history,
      (select coalesce(sum(pontos_total), 0) || '/' || coalesce(sum(badges_count), 0) from public.tecnicos where id = any(${technicians.map((t) => t.id)}::uuid[])) as points_and_badges,
      (select string_agg(status::text || ':' || coalesce(approval_token_used_at::text, ''), ',' order by id) from public.proposals where id = any(${proposalIds}::uuid[])) as proposals,
      (select count(*) from public.audit_log where actor_id = any(${portalUsers}::uuid[]) or entity_id = any(${proposalIds}::text[]))::text as audit,
      (select string_agg(md5(coalesce(encrypted_password, '')), ',' order by id) from auth.users where id = any(${portalUsers}::uuid[])) as passwords,
      (select count(*) from storage.objects where bucket_id = 'proposal-pdfs' and name like ${`${seller.id}/%`})::text as pdfs`;
  return row;
}

/** Why an answer breaks the document, or null when it keeps it. */
function problemWith(operation: Operation, status: number, contentType: string, text: string): string | null {
  const documented = operation.responses[String(status)] ?? operation.responses[`${String(status)[0]}XX`] ?? operation.responses.default;
  const upstream = (status === 502 || status === 504) && documented !== undefined;
  // The gateway's HTTP server refuses a request head over 16 KB before any service sees it, with an
  // empty 431, as Kong does in front of hosted Supabase: no operation could document it.
  if (status === 431) return null;
  if (status >= 500 && !upstream) return `answered ${status}: ${text.slice(0, 300)}`;
  if (!documented) return `answered ${status}, which the document does not list: ${text.slice(0, 300)}`;
  if (documented.contentTypes.length > 0 && !documented.contentTypes.some((type) => contentType.startsWith(type))) return `answered ${status} as ${contentType || "no content type"}, documented ${documented.contentTypes.join(" or ")}`;
  if (!documented.jsonSchema || !contentType.startsWith("application/json")) return null;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return `answered ${status} with JSON that does not parse: ${text.slice(0, 200)}`;
  }
  const violations = specViolations(operation.method, operation.path, { status, body });
  return violations.length > 0 ? `answered ${status} outside its documented schema (${violations.join("; ")}): ${text.slice(0, 300)}` : null;
}

/** Sends one generated request through the gateway from a device of its own. */
async function send(request: GeneratedRequest): Promise<{ status: number; contentType: string; text: string }> {
  try {
    const response = await fetchFrom(simulatedClientAddress())(`${env.url}${request.url}`, { method: request.method, headers: request.headers, body: request.body, redirect: "manual" });
    return { status: response.status, contentType: response.headers.get("content-type") ?? "", text: await response.text() };
  } catch (error) {
    throw new Error(`${request.method} ${request.url.slice(0, 120)}: the connection failed (${(error as Error & { cause?: Error }).cause?.message ?? (error as Error).message})`);
  }
}

/** The fields of a fingerprint that differ. */
function changed(before: Record<string, string>, after: Record<string, string>, answerText: string): string[] {
  // A refusal that names an executionId was admitted first: that run is recorded (failed), with
  // its Idempotency-Key so a repeat replays the refusal, as the document says.
  const recordedRun = /"executionId"\s*:/.test(answerText);
  return Object.keys(before).filter((key) => before[key] !== after[key] && !(recordedRun && (key === "executions" || key === "idempotency_keys")));
}

beforeAll(async () => {
  const city = await createCity();
  const workspace = await createWorkspace("OpenAPI fuzz");
  [technicians, seller, admin] = await Promise.all([
    Promise.all([createTechnician(city), createTechnician(city), createTechnician(city)]),
    createPortalUser("Fuzz Vendedora", "technician"),
    createPortalUser("Fuzz Admin", "admin"),
  ]);
  editor = workspace.members.editor;
  workspaceId = workspace.id;
  // No Response block: its answer would replace the documented 200 body.
  const echo = await createWorkflow(editor, workspace.id, "Echo", new WorkflowBuilder()
    .block("api", "api_trigger", { inputFormat: [{ name: "text", type: "string" }, { name: "count", type: "number" }] }, { name: "API" })
    .block("echo", "variables", { assignments: [{ name: "echoed", value: "<api.text>" }] }, { name: "Echo" })
    .edge("api", "echo")
    .build());
  const triggered = await createWorkflow(editor, workspace.id, "Triggers", new WorkflowBuilder()
    .block("hook", "generic_webhook", { path: `fuzz-hook-${workspace.id.slice(0, 8)}` }, { name: "Webhook 1" })
    .block("chat", "chat_trigger", {}, { name: "Chat" })
    .block("reply", "variables", { assignments: [{ name: "said", value: "<chat.message>" }] }, { name: "Reply" })
    .edge("chat", "reply")
    .build());
  workflowIds = [echo, triggered];
  for (const id of workflowIds) {
    const deployed = await editor.client.rpc("deploy_workflow", { p_workflow_id: id });
    if (deployed.error) throw deployed.error;
  }
  const identifier = `fuzz-${workspace.id.slice(0, 8)}`;
  const chat = await editor.client.rpc("deploy_chat", { p_workflow_id: triggered, p_identifier: identifier, p_title: "Fuzz" });
  if (chat.error) throw chat.error;
  chatId = (await sql<{ id: string }[]>`select id from public.chat_deployments where identifier = ${identifier}`)[0].id;
  const created = await editor.client.rpc("create_api_key", { p_name: "fuzz" }).single<{ key: string }>();
  if (created.error) throw created.error;
  apiKey = created.data.key;
  await liftLimits(workspace.id, { logsPerMinute: 100_000 });
  // A run to read back through jobs and logs.
  const run = await fetch(`${env.url}/api/workflows/${echo}/execute`, { method: "POST", headers: { "x-api-key": apiKey, "content-type": "application/json" }, body: JSON.stringify({ text: "seed" }) });
  const executionId = run.headers.get("x-execution-id");
  if (run.status !== 200 || !executionId) throw new Error(`the seed run answered ${run.status}: ${await run.text()}`);
  const calls = await Promise.all(technicians.map((technician) => createCall(technician)));
  const [product, customer] = await Promise.all([createProduct(), createCustomer(seller)]);
  const proposals = await Promise.all([createProposal(seller, customer.id, product.id), createProposal(seller, customer.id, product.id)]);
  proposalIds = proposals.map((proposal) => proposal.id);
  // createProposal issued each proposal's token (only its digest is stored, so it is kept from there).
  const tokens = proposals.map((proposal) => ({ approval_token: proposal.approval_token }));
  const { data: customerRow } = await serviceClient().from("customers").select("email").eq("id", customer.id).single<{ email: string }>();
  bad = Object.fromEntries(await Promise.all([...technicians.map((t) => t.id), seller.id, editor.id].map(async (id) => [id, await badTokens(id)] as const)));
  known = {
    usuario_id: technicians.map((technician) => technician.id),
    chamado_id: calls,
    acao: ["chamado_concluido", "avaliacao_5_estrelas", "checkin_pontual"],
    cidade: [city],
    categoria: ["pontualidade", "qualidade"],
    workflowId: workflowIds,
    executionId: [executionId],
    id: [executionId],
    runId: [executionId],
    workspaceId: [workspace.id],
    path: [`fuzz-hook-${workspace.id.slice(0, 8)}`],
    identifier: [identifier],
    proposalId: proposalIds,
    recipientEmail: [customerRow?.email ?? "x@example.test"],
    userId: [seller.id],
    token: tokens.map((row) => row.approval_token),
    email: [customerRow?.email ?? "x@example.test"],
    cep: ["01001-000", "01001000"],
  };
});

afterAll(async () => {
  await sql.end();
});

describe("docs/openapi.yaml, fuzzed", () => {
  it("describes every public endpoint the proof issue names, and each has credentials to reach it with", () => {
    const names = all.map((operation) => operation.name);
    for (const expected of [
      "POST /api/workflows/{workflowId}/execute",
      "GET /api/jobs/{executionId}",
      "POST /api/webhooks/trigger/{path}",
      "GET /api/v1/logs",
      "GET /api/users/me/usage-limits",
      "POST /api/v1/gamification/points",
      "GET /approve-proposal",
      "POST /approve-proposal",
      "POST /generate-proposal-pdf",
      "POST /send-proposal-email",
      "POST /admin-reset-password",
      "GET /postal-code-lookup",
      "POST /chat/{identifier}",
    ]) expect(names).toContain(expected);
    expect(all.filter((operation) => credentials(operation) === null).map((operation) => operation.name)).toEqual([]);
  });

  it.each(all.map((operation) => [operation.name, operation] as const))("%s: generated input gets a documented answer, and a refusal changes nothing", async (_name, operation) => {
    const credential = fc.oneof({ arbitrary: fc.constant<BadCredential | null>(null), weight: 6 }, { arbitrary: fc.constantFrom<BadCredential>("forged", "expired", "tampered", "unissued-key"), weight: 1 });
    await fc.assert(
      fc.asyncProperty(fc.noShrink(fc.tuple(fc.noShrink(requests(operation, known)), credential)), async ([request, kind]) => {
        const proper = credentials(operation) ?? {};
        const headers = { ...request.headers, ...(kind ? spoiled(operation, proper, kind) : proper) };
        const before = await fingerprint();
        const answer = await send({ ...request, headers });
        const label = `${request.method} ${request.url.slice(0, 160)} [${[...request.mutations, ...(kind ? [`credential ${kind}`] : [])].join("; ") || "conforming"}]`;
        const problem = problemWith(operation, answer.status, answer.contentType, answer.text);
        if (problem) throw new Error(`${label}: ${problem}`);
        if (answer.status >= 400) {
          const differences = changed(before, await fingerprint(), answer.text);
          if (differences.length > 0) throw new Error(`${label}: refused with ${answer.status} (${answer.text.slice(0, 200)}), yet changed ${differences.join(", ")}`);
        }
        const needsCredential = proper.authorization !== undefined || proper["x-api-key"] !== undefined;
        if (kind && needsCredential && answer.status < 400) throw new Error(`${label}: a ${kind} credential was accepted (${answer.status})`);
      }),
      { numRuns: RUNS, endOnFailure: true },
    );
  });
});
