/**
 * Cross-tenant access, walked everywhere at once: tenant A (a workspace with a deployed workflow, a
 * run, an API key, an environment variable, a webhook subscription and its delivery, a password
 * chat; a technician with a call and scored points; a seller with a customer, a proposal and its
 * PDF) and tenant B (another workspace, technician and seller, each with credentials of their own).
 * B, with A's ids, must:
 * - read no row of A from any table or view of the data API (every one the catalogue lists, by
 *   every uuid column it has), and delete or change none;
 * - get from every database function it may call with A's ids exactly what a random id gets (so
 *   A's ids are not even confirmed to exist), impersonation arguments included;
 * - be refused by every HTTP endpoint (workflows, jobs, logs, runs, status, manual runs, chat
 *   sessions, gamification, the portal functions, storage), with nothing of A's in any answer;
 * and A's rows must be exactly as they were afterwards.
 */
import { randomUUID } from "node:crypto";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fetchFrom, serviceClient, simulatedClientAddress, type TestUser } from "../helpers/clients.ts";
import { env } from "../helpers/env.ts";
import { until } from "../helpers/until.ts";
import { createCall, createCity, createTechnician, type Technician } from "../gamification/factories.ts";
import { createPortalUser, technicianWithProposal } from "../portal/factories.ts";
import { createWorkflow, createWorkspace, type TestWorkspace } from "../workflows/factories.ts";
import { liftLimits } from "../workflows/logs-helpers.ts";
import { WorkflowBuilder } from "../../supabase/functions/_shared/workflows/state/state-builder.ts";

const sql = postgres(env.dbUrl, { max: 2, onnotice: () => {} });
/** Text only tenant A's rows hold: no answer to B may contain it. */
const MARKER = `tenant-a-private-${randomUUID()}`;

interface Tenant {
  workspace: TestWorkspace;
  apiKey: string;
  technician: Technician;
  seller: TestUser;
}

let a: Tenant & { workflowId: string; chatFlowId: string; chatId: string; chatIdentifier: string; executionId: string; keyId: string; subscriptionId: string; deliveryId: string; variableId: string; callId: string; proposalId: string; customerId: string; pdfPath: string };
let b: Tenant & { chatIdentifier: string; chatCookie: string };
/** A's private object ids by kind: no table may show B a row holding one. */
let privateIds: Record<string, string>;

/** A request through the gateway from a device of its own; the answer's status and text. */
async function send(method: string, path: string, headers: Record<string, string> = {}, body?: unknown): Promise<{ status: number; text: string }> {
  const response = await fetchFrom(simulatedClientAddress())(`${env.url}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, text: await response.text() };
}

const bearer = (user: TestUser) => ({ apikey: env.anonKey, authorization: `Bearer ${user.accessToken}` });

/** Every row of A's, as the database holds it (service side), to compare before and after. */
async function tenantRows(): Promise<string> {
  const ids = Object.values(privateIds);
  const rows = await sql<{ snapshot: string }[]>`
    select concat_ws(' | ',
      (select string_agg(md5(w::text), ',' order by w.id) from public.workflows w where w.workspace_id = ${a.workspace.id}),
      (select string_agg(md5(x::text), ',' order by x.id) from public.workflow_executions x where x.workspace_id = ${a.workspace.id}),
      (select string_agg(md5(k::text), ',' order by k.id) from public.api_keys k where k.id = ${a.keyId}),
      (select string_agg(md5(s::text), ',' order by s.id) from public.webhook_subscriptions s where s.workspace_id = ${a.workspace.id}),
      (select string_agg(md5(c::text), ',' order by c.id) from public.chat_deployments c where c.workspace_id = ${a.workspace.id}),
      (select string_agg(md5(e::text), ',' order by e.id) from public.environment_variables e where e.workspace_id = ${a.workspace.id}),
      (select string_agg(md5(m::text), ',' order by m.user_id) from public.workspace_members m where m.workspace_id = ${a.workspace.id}),
      (select string_agg(md5(p::text), ',' order by p.id) from public.proposals p where p.id = any(${ids}::uuid[])),
      (select string_agg(md5(c::text), ',' order by c.id) from public.customers c where c.id = any(${ids}::uuid[])),
      (select string_agg(md5(h::text), ',' order by h.id) from public.historico_pontos h where h.usuario_id = ${a.technician.id}),
      (select md5(t::text) from public.tecnicos t where t.id = ${a.technician.id}),
      (select count(*)::text from storage.objects o where o.name = ${a.pdfPath})) as snapshot`;
  return rows[0].snapshot;
}

async function makeTenant(label: string): Promise<Tenant> {
  const city = await createCity();
  const [workspace, technician, seller] = await Promise.all([createWorkspace(`Tenant ${label}`), createTechnician(city), createPortalUser(`Vendedor ${label}`, "technician")]);
  await liftLimits(workspace.id, { logsPerMinute: 1_000 });
  const created = await workspace.owner.client.rpc("create_api_key", { p_name: `${label} key`, p_workspace_id: workspace.id }).single<{ key: string; id: string }>();
  if (created.error) throw created.error;
  return { workspace, apiKey: created.data.key, technician, seller };
}

/** Deploys a chat whose password is `password` on a new workflow of `tenant`; its identifier and workflow. */
async function passwordChat(tenant: Tenant, password: string): Promise<{ identifier: string; workflowId: string }> {
  const editor = tenant.workspace.members.editor;
  const workflowId = await createWorkflow(editor, tenant.workspace.id, `Chat ${MARKER}`, new WorkflowBuilder()
    .block("chat", "chat_trigger", {}, { name: "Chat" })
    .block("reply", "variables", { assignments: [{ name: "said", value: "<chat.message>" }] }, { name: "Reply" })
    .edge("chat", "reply")
    .build());
  const deployed = await editor.client.rpc("deploy_workflow", { p_workflow_id: workflowId });
  if (deployed.error) throw deployed.error;
  const identifier = `tenant-${randomUUID().slice(0, 8)}`;
  const chat = await editor.client.rpc("deploy_chat", { p_workflow_id: workflowId, p_identifier: identifier, p_title: "Tenant chat", p_auth_type: "password", p_password: password });
  if (chat.error) throw chat.error;
  return { identifier, workflowId };
}

beforeAll(async () => {
  const [tenantA, tenantB] = await Promise.all([makeTenant("A"), makeTenant("B")]);
  const editor = tenantA.workspace.members.editor;
  // A's workflow, deployed and run once through the API, with a subscription that gets a delivery.
  const workflowId = await createWorkflow(editor, tenantA.workspace.id, `Flow ${MARKER}`, new WorkflowBuilder()
    .block("api", "api_trigger", { inputFormat: [{ name: "text", type: "string" }] }, { name: "API" })
    .block("echo", "variables", { assignments: [{ name: "echoed", value: `<api.text> ${MARKER}` }] }, { name: "Echo" })
    .edge("api", "echo")
    .build());
  const deployed = await editor.client.rpc("deploy_workflow", { p_workflow_id: workflowId });
  if (deployed.error) throw deployed.error;
  const subscription = await editor.client.from("webhook_subscriptions").insert({ workflow_id: workflowId, url: `http://127.0.0.1:9/${MARKER}`, secret: `whsec-${MARKER}` }).select("id").single<{ id: string }>();
  if (subscription.error) throw subscription.error;
  const variable = await tenantA.workspace.owner.client.rpc("set_environment_variable", { p_workspace_id: tenantA.workspace.id, p_name: "TENANT_SECRET", p_value: MARKER }).single<{ id: string }>();
  if (variable.error) throw variable.error;
  const run = await send("POST", `/api/workflows/${workflowId}/execute`, { "x-api-key": tenantA.apiKey }, { text: "hello" });
  const executionId = (JSON.parse(run.text) as { executionId: string }).executionId;
  if (run.status !== 200 || !executionId) throw new Error(`A's run answered ${run.status}: ${run.text}`);
  let deliveryId = "";
  await until("A's delivery to be recorded", async () => {
    deliveryId = (await sql<{ id: string }[]>`select id from public.webhook_deliveries where execution_id = ${executionId}`)[0]?.id ?? "";
    return deliveryId !== "";
  });
  const keyId = (await sql<{ id: string }[]>`select id from public.api_keys where workspace_id = ${tenantA.workspace.id}`)[0].id;
  const [chatA, chatB] = await Promise.all([passwordChat(tenantA, `pw-${MARKER}`), passwordChat(tenantB, "tenant b password")]);
  const chatId = (await sql<{ id: string }[]>`select id from public.chat_deployments where identifier = ${chatA.identifier}`)[0].id;
  // B signs in to its own chat: the cookie is a valid session, for B's chat only.
  const login = await fetchFrom(simulatedClientAddress())(`${env.url}/chat/${chatB.identifier}/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ password: "tenant b password" }) });
  const chatCookie = /^[^;]+/.exec(login.headers.get("set-cookie") ?? "")?.[0] ?? "";
  if (login.status !== 200 || !chatCookie) throw new Error(`B's chat login answered ${login.status}`);
  // A's technician scores a call; A's seller has a proposal whose PDF is stored.
  const callId = await createCall(tenantA.technician);
  const scored = await send("POST", "/api/v1/gamification/points", { authorization: `Bearer ${tenantA.technician.accessToken}` }, { usuario_id: tenantA.technician.id, acao: "chamado_concluido", chamado_id: callId });
  if (scored.status !== 200) throw new Error(`A's scoring answered ${scored.status}: ${scored.text}`);
  const portal = await technicianWithProposal(`Vendedora ${MARKER.slice(0, 20)}`);
  const pdf = await send("POST", "/functions/v1/generate-proposal-pdf", bearer(portal.technician), { proposalId: portal.proposal.id });
  if (pdf.status !== 200) throw new Error(`A's PDF answered ${pdf.status}: ${pdf.text}`);
  a = {
    ...tenantA, seller: portal.technician, workflowId, chatFlowId: chatA.workflowId, chatId, chatIdentifier: chatA.identifier, executionId, keyId,
    subscriptionId: subscription.data.id, deliveryId, variableId: variable.data.id, callId, proposalId: portal.proposal.id, customerId: portal.customer.id,
    pdfPath: (JSON.parse(pdf.text) as { path: string }).path,
  };
  b = { ...tenantB, chatIdentifier: chatB.identifier, chatCookie };
  privateIds = {
    workspace: a.workspace.id, workflow: a.workflowId, chatWorkflow: a.chatFlowId, chat: a.chatId, execution: a.executionId, key: a.keyId,
    subscription: a.subscriptionId, delivery: a.deliveryId, variable: a.variableId, call: a.callId, proposal: a.proposalId, customer: a.customerId,
  };
});

afterAll(async () => {
  await sql.end();
});

/** Every table and view of the public schema with its uuid columns. */
async function exposedRelations(): Promise<{ name: string; columns: string[] }[]> {
  return await sql<{ name: string; columns: string[] }[]>`
    select c.relname as name, array_agg(a.attname::text order by a.attnum) as columns
    from pg_class c
    join pg_namespace n on n.oid = c.relnamespace
    join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped and a.atttypid = 'uuid'::regtype
    where n.nspname = 'public' and c.relkind in ('r', 'v', 'm', 'p')
    group by c.relname
    order by c.relname`;
}

/** B's people who try: a workspace member of every role and owner, the technician, the seller. */
function intruders(): [string, TestUser][] {
  return [["B's owner", b.workspace.owner], ["B's admin", b.workspace.members.admin], ["B's editor", b.workspace.members.editor], ["B's technician", b.technician], ["B's seller", b.seller]];
}

describe("another tenant's ids", () => {
  it("show B no row of A's in any table or view, by any uuid column", async () => {
    const relations = await exposedRelations();
    expect(relations.length).toBeGreaterThan(30);
    const ids = Object.values(privateIds).join(",");
    const leaks: string[] = [];
    for (const [who, user] of intruders()) {
      await Promise.all(relations.map(async ({ name, columns }) => {
        const filter = `or=(${columns.map((column) => `${column}.in.(${ids})`).join(",")})`;
        const answer = await send("GET", `/rest/v1/${name}?select=${columns.join(",")}&${filter}`, bearer(user));
        if (answer.status === 200 && answer.text !== "[]") leaks.push(`${who} read ${name}: ${answer.text.slice(0, 200)}`);
        if (answer.status >= 500 || answer.text.includes(MARKER)) leaks.push(`${who} ${name}: ${answer.status} ${answer.text.slice(0, 200)}`);
      }));
    }
    expect(leaks).toEqual([]);
  });

  it("let B delete or change no row of A's in any table", async () => {
    const before = await tenantRows();
    const relations = await exposedRelations();
    const ids = Object.values(privateIds).join(",");
    const problems: string[] = [];
    const [who, user] = intruders()[0];
    await Promise.all(relations.map(async ({ name, columns }) => {
      const filter = `or=(${columns.map((column) => `${column}.in.(${ids})`).join(",")})`;
      for (const [method, body] of [["DELETE", undefined], ["PATCH", Object.fromEntries(columns.map((column) => [column, b.workspace.id]))]] as const) {
        const answer = await send(method, `/rest/v1/${name}?${filter}`, { ...bearer(user), prefer: "return=representation" }, body);
        if (answer.status < 300 && answer.text !== "[]" && answer.text !== "") problems.push(`${who} ${method} ${name}: ${answer.status} ${answer.text.slice(0, 200)}`);
        if (answer.status >= 500) problems.push(`${who} ${method} ${name}: ${answer.status} ${answer.text.slice(0, 200)}`);
      }
    }));
    expect(problems).toEqual([]);
    expect(await tenantRows()).toBe(before);
  });

  it("let B add nothing to A's workspace, workflows, chats or proposals", async () => {
    const before = await tenantRows();
    const owner = b.workspace.owner;
    const attempts: [string, string, unknown][] = [
      ["workflows", "/rest/v1/workflows", { workspace_id: a.workspace.id, name: "intruder", state: {} }],
      ["workspace_members", "/rest/v1/workspace_members", { workspace_id: a.workspace.id, user_id: owner.id, role: "admin" }],
      ["webhook_subscriptions", "/rest/v1/webhook_subscriptions", { workflow_id: a.workflowId, url: "http://127.0.0.1:9/intruder" }],
      ["folders", "/rest/v1/folders", { workspace_id: a.workspace.id, name: "intruder" }],
      ["environment_variables", "/rest/v1/environment_variables", { workspace_id: a.workspace.id, name: "INTRUDER" }],
    ];
    for (const [table, path, body] of attempts) {
      const answer = await send("POST", path, bearer(owner), body);
      expect([table, answer.status >= 400 && answer.status < 500]).toEqual([table, true]);
    }
    const proposal = await send("POST", "/rest/v1/proposals", bearer(b.seller), { customer_id: a.customerId, product_id: randomUUID(), monthly_value: 1, contract_months: 1 });
    expect(proposal.status).toBeGreaterThanOrEqual(400);
    expect(proposal.status).toBeLessThan(500);
    expect(await tenantRows()).toBe(before);
  });

  it("get from every database function B may call what a random id gets, impersonation arguments included", async () => {
    const before = await tenantRows();
    const functions = await sql<{ name: string; names: string[]; types: string[] }[]>`
      select p.proname as name, (p.proargnames)[1:p.pronargs]::text[] as names, array(select format_type(t, null) from unnest(p.proargtypes) t) as types
      from pg_proc p join pg_namespace n on n.oid = p.pronamespace
      where n.nspname = 'public' and has_function_privilege('authenticated', p.oid, 'execute') and 'uuid'::regtype = any(p.proargtypes) and p.prorettype <> 'trigger'::regtype
      order by p.proname`;
    expect(functions.length).toBeGreaterThan(10);
    /** The id of A's for a parameter, by its name (a user id is A's owner: the impersonation attempt). */
    const aIds = (name: string): string | undefined => ({
      p_workflow_id: a.workflowId, p_execution_id: a.executionId, p_workspace_id: a.workspace.id, p_delivery_id: a.deliveryId, p_subscription_id: a.subscriptionId,
      p_id: a.keyId, p_chat_id: a.chatId, p_user_id: a.workspace.owner.id, _user_id: a.workspace.owner.id, p_usuario_id: a.technician.id, p_chamado_id: a.callId,
    } as Record<string, string>)[name];
    const argument = (name: string, type: string, uuid: (name: string) => string): unknown => {
      if (type === "uuid") return uuid(name);
      if (name === "p_api_key") return b.apiKey;
      if (type === "integer" || type === "bigint") return 1;
      if (type === "boolean") return false;
      if (type === "jsonb" || type === "json") return {};
      if (type.startsWith("timestamp")) return new Date().toISOString();
      if (type === "app_role") return "admin";
      return "x";
    };
    // Ids, times and the rate-limit budget left differ between any two calls.
    const normalised = (text: string, ids: string[]) => ids.reduce((result, id) => result.replaceAll(id, "<id>"), text)
      .replace(/\d{4}-\d\d-\d\dT[\d:.]+(Z|[+-]\d\d:\d\d)?/g, "<time>")
      .replace(/"restante": ?\d+/g, '"restante": <n>');
    const differences: string[] = [];
    for (const fn of functions) {
      // A parameter with no id of A's gets the same random id in both calls.
      const random = new Map<string, string>();
      const randomIdFor = (name: string) => random.get(name) ?? random.set(name, randomUUID()).get(name)!;
      const aIdFor = (name: string) => aIds(name) ?? randomIdFor(name);
      const call = async (uuid: (name: string) => string) => {
        const args = Object.fromEntries(fn.names.map((name, index) => [name, argument(name, fn.types[index], uuid)]));
        const ids = fn.names.filter((_name, index) => fn.types[index] === "uuid").map((name) => uuid(name));
        const answer = await send("POST", `/rest/v1/rpc/${fn.name}`, bearer(b.workspace.owner), args);
        return { status: answer.status, text: normalised(answer.text, ids), raw: answer.text };
      };
      const withA = await call(aIdFor);
      const withRandom = await call(randomIdFor);
      if (withA.status >= 500 || withA.raw.includes(MARKER)) differences.push(`${fn.name}: ${withA.status} ${withA.raw.slice(0, 200)}`);
      else if (withA.status !== withRandom.status || withA.text !== withRandom.text) differences.push(`${fn.name}: A's ids ${withA.status} ${withA.text.slice(0, 160)} ≠ random ${withRandom.status} ${withRandom.text.slice(0, 160)}`);
    }
    expect(differences).toEqual([]);
    expect(await tenantRows()).toBe(before);
  });
});

describe("another tenant's ids over HTTP", () => {
  it("the workflow endpoints refuse B's key and session for A's workflow, run, logs and runs", async () => {
    const key = { "x-api-key": b.apiKey };
    const session = { authorization: `Bearer ${b.workspace.members.editor.accessToken}` };
    const cases: [string, Promise<{ status: number; text: string }>, number[]][] = [
      ["execute A's workflow with B's key", send("POST", `/api/workflows/${a.workflowId}/execute`, key, { text: "x" }), [404]],
      ["A's workflow status with B's key", send("GET", `/api/workflows/${a.workflowId}/status`, key), [404]],
      ["A's workflow status with B's session", send("GET", `/api/workflows/${a.workflowId}/status`, session), [404]],
      ["manual run of A's workflow with B's session", send("POST", `/api/workflows/${a.workflowId}/run`, session, { input: {} }), [404]],
      ["A's job with B's key", send("GET", `/api/jobs/${a.executionId}`, key), [404]],
      ["A's job with B's session", send("GET", `/api/jobs/${a.executionId}`, session), [404]],
      ["A's logs with B's key", send("GET", `/api/v1/logs?workspaceId=${a.workspace.id}`, key), [403]],
      ["A's log with B's key", send("GET", `/api/v1/logs/${a.executionId}`, key), [404]],
      ["A's execution with B's key", send("GET", `/api/v1/logs/executions/${a.executionId}`, key), [404]],
      ["A's runs with B's key", send("GET", `/api/v2/runs?workspaceId=${a.workspace.id}`, key), [404]],
      ["A's workflow's runs with B's key", send("GET", `/api/v2/workflows/${a.workflowId}/runs`, key), [404]],
      ["A's run with B's key", send("GET", `/api/v2/runs/${a.executionId}`, key), [404]],
      ["A's run under its workflow with B's key", send("GET", `/api/v2/workflows/${a.workflowId}/runs/${a.executionId}`, key), [404]],
    ];
    const answers = await Promise.all(cases.map(async ([label, answer, expected]) => {
      const { status, text } = await answer;
      return [label, expected.includes(status) ? "refused" : `${status} ${text.slice(0, 200)}`, text.includes(MARKER) ? "leaks A's data" : "clean"];
    }));
    expect(answers).toEqual(cases.map(([label]) => [label, "refused", "clean"]));
  });

  it("a chat session of B's chat opens nothing in A's chat, and A's chat needs its own sign-in", async () => {
    const cookieName = (identifier: string) => `orbita_chat_${identifier}`;
    const value = b.chatCookie.slice(b.chatCookie.indexOf("=") + 1);
    const before = (await sql<{ count: string }[]>`select count(*) from workflows_private.chat_turns where chat_id = ${a.chatId}`)[0].count;
    const replayed = await send("POST", `/chat/${a.chatIdentifier}`, { cookie: `${cookieName(a.chatIdentifier)}=${value}` }, { message: "let me in" });
    const none = await send("POST", `/chat/${a.chatIdentifier}`, {}, { message: "let me in" });
    const config = await send("GET", `/chat/${a.chatIdentifier}/config`, { cookie: `${cookieName(a.chatIdentifier)}=${value}` });
    // A valid session of another chat is no session here.
    expect([replayed.status, (JSON.parse(replayed.text) as { code: string }).code]).toEqual([401, "AUTH_REQUIRED"]);
    expect([none.status, (JSON.parse(none.text) as { code: string }).code]).toEqual([401, "AUTH_REQUIRED"]);
    expect((JSON.parse(config.text) as { authenticated: boolean }).authenticated).toBe(false);
    expect((await sql<{ count: string }[]>`select count(*) from workflows_private.chat_turns where chat_id = ${a.chatId}`)[0].count).toBe(before);
  });

  it("the gamification API refuses B's technician A's history, badges and points", async () => {
    const before = await tenantRows();
    const headers = { authorization: `Bearer ${b.technician.accessToken}` };
    const answers = await Promise.all([
      send("GET", `/api/v1/gamification/points/history?usuario_id=${a.technician.id}`, headers),
      send("GET", `/api/v1/gamification/badges/user/${a.technician.id}`, headers),
      send("POST", "/api/v1/gamification/points", headers, { usuario_id: a.technician.id, acao: "avaliacao_5_estrelas", chamado_id: a.callId }),
      send("POST", "/api/v1/gamification/points", headers, { usuario_id: b.technician.id, acao: "chamado_concluido", chamado_id: a.callId }),
    ]);
    expect(answers.map((answer) => [answer.status, (JSON.parse(answer.text) as { error?: { codigo: string } }).error?.codigo])).toEqual([
      [403, "SEM_PERMISSAO"],
      [403, "SEM_PERMISSAO"],
      [403, "SEM_PERMISSAO"],
      [403, "CHAMADO_DE_OUTRO_TECNICO"],
    ]);
    expect(await tenantRows()).toBe(before);
  });

  it("the portal functions and storage refuse B's seller A's proposal and its PDF", async () => {
    // A's seller may (the control), B's seller may not.
    expect((await send("POST", "/functions/v1/generate-proposal-pdf", bearer(a.seller), { proposalId: a.proposalId })).status).toBe(200);
    const before = await tenantRows();
    const headers = bearer(b.seller);
    const pdf = await send("POST", "/functions/v1/generate-proposal-pdf", headers, { proposalId: a.proposalId });
    const mail = await send("POST", "/functions/v1/send-proposal-email", headers, { proposalId: a.proposalId, recipientEmail: "anyone@example.test" });
    const download = await send("GET", `/storage/v1/object/proposal-pdfs/${a.pdfPath}`, headers);
    const listing = await send("POST", "/storage/v1/object/list/proposal-pdfs", headers, { prefix: a.pdfPath.split("/")[0], limit: 100 });
    const signed = await send("POST", `/storage/v1/object/sign/proposal-pdfs/${a.pdfPath}`, headers, { expiresIn: 60 });
    // Exactly what a random id gets, so A's proposal is not even confirmed to exist.
    const unknown = crypto.randomUUID();
    const random = await send("POST", "/functions/v1/generate-proposal-pdf", headers, { proposalId: unknown });
    expect([pdf.status, mail.status, random.status]).toEqual([404, 404, 404]);
    expect([pdf.text, mail.text]).toEqual([random.text, random.text].map((text) => text.replace(unknown, a.proposalId)));
    expect(download.status).toBeGreaterThanOrEqual(400);
    expect(signed.status).toBeGreaterThanOrEqual(400);
    expect(listing.text).not.toContain(a.proposalId);
    for (const answer of [pdf, mail, download, listing, signed]) {
      expect(answer.status).toBeLessThan(500);
      expect(answer.text).not.toContain(MARKER);
    }
    expect(await tenantRows()).toBe(before);
    // No client reads the bucket directly, A's seller included: the signed URL is the only way in.
    expect((await send("GET", `/storage/v1/object/proposal-pdfs/${a.pdfPath}`, bearer(a.seller))).status).toBe(download.status);
  });
});

describe("control", () => {
  it("A's own people read A's rows and run A's workflow, so the refusals are about the tenant", async () => {
    // The scan B got nothing from finds A's rows for A's own editor.
    const ids = Object.values(privateIds).join(",");
    const found = await Promise.all(["workflows", "workflow_executions", "webhook_subscriptions", "webhook_deliveries", "chat_deployments", "environment_variables"].map(async (name) => {
      const columns = (await exposedRelations()).find((relation) => relation.name === name)!.columns;
      const answer = await send("GET", `/rest/v1/${name}?select=${columns.join(",")}&or=(${columns.map((column) => `${column}.in.(${ids})`).join(",")})`, bearer(a.workspace.members.editor));
      return [name, (JSON.parse(answer.text) as unknown[]).length > 0];
    }));
    expect(found.filter(([, seen]) => !seen)).toEqual([]);
    expect((await send("GET", `/api/jobs/${a.executionId}`, { "x-api-key": a.apiKey })).status).toBe(200);
    expect((await serviceClient().from("webhook_deliveries").select("id").eq("id", a.deliveryId)).data).toEqual([{ id: a.deliveryId }]);
  });
});
