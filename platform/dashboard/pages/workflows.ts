import { Hono } from "hono";
import { html } from "hono/html";
import { act, flashOf, formFields, invalid } from "../actions.ts";
import { DashboardError, errorInWords } from "../errors.ts";
import { cellText, layout, type Markup } from "../layout.ts";
import type { StackClient } from "../stack-client.ts";
import { confirmationPage, isConfirmed } from "../confirm.ts";
import { blockConfigs, type DrawnState, graphSvg } from "../workflows/graph-svg.ts";
import { runFilterQuery, RUN_STATUSES, RUN_TRIGGERS, type RunFilter, runFilterOf } from "../workflows/run-filter.ts";
import { durationText, spanWaterfall } from "../workflows/waterfall.ts";
import { memberSession } from "../workflows/run-as-member.ts";
import { waitingApprovalsSection } from "../workflows/waiting-approvals.ts";
import { checkId, rpc } from "../workflows/stack-rpc.ts";
import { workspaceSettingsPages } from "./workspace-settings.ts";
import { subscriptionPages, subscriptionsSection } from "./webhook-subscriptions.ts";
import { schedulePages, schedulesSection } from "./schedules.ts";
import { createWorkflowForm, manageWorkflowForms, workflowManagementPages } from "./workflow-manage.ts";

interface Workflow {
  id: string;
  workspace_id: string;
  name: string;
  description: string;
  state: DrawnState & { blocks: Record<string, { type: string; name?: string; config?: { inputFormat?: InputField[] } }> };
  updated_at: string;
}

/** One field of a trigger's Input Format. */
interface InputField {
  name: string;
  type?: string;
  value?: unknown;
}

interface Deployment {
  version: number;
  note: string | null;
  is_active: boolean;
  created_at: string;
  activated_at: string | null;
}

interface Execution {
  id: string;
  workflow_id: string;
  trigger: string;
  mode: string;
  status: string;
  deployment_version: number | null;
  created_at: string;
  duration_ms: number | null;
  error_message: string | null;
  output?: unknown;
  input?: unknown;
  trace_spans?: TraceSpan[] | null;
}

/** A trace span as the engine records it (workflow_executions.trace_spans). */
interface TraceSpan {
  name: string;
  type: string;
  status: string;
  durationMs: number;
  error?: string;
  output?: unknown;
  children?: TraceSpan[];
}

/** The structural diff diff_workflow_deployment answers. */
interface StateDiff {
  identical: boolean;
  from: Record<string, unknown>;
  to: Record<string, unknown>;
  blocks: { added: unknown[]; removed: unknown[]; changed: unknown[] };
  edges: { added: unknown[]; removed: unknown[] };
  subflows: { added: unknown[]; removed: unknown[]; changed: unknown[] };
}

/** Runs listed on a workflow's page. */
const RUNS_SHOWN = 20;
/** Longest output shown in a trace span before it is cut. */
const OUTPUT_CHARACTERS = 400;


/** Trigger blocks that take input (an Input Format), each with its fields. */
function inputTriggers(workflow: Workflow): { id: string; name: string; fields: InputField[] }[] {
  return Object.entries(workflow.state.blocks)
    .filter(([, block]) => Array.isArray(block.config?.inputFormat))
    .map(([id, block]) => ({ id, name: block.name ?? id, fields: (block.config?.inputFormat ?? []).filter((field) => typeof field.name === "string" && field.name) }));
}

/** The form's values as the trigger's input: typed as the Input Format says, blank fields left out. */
function inputFromForm(fields: InputField[], form: Record<string, string>): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const field of fields) {
    const raw = form[`input:${field.name}`];
    if (raw === undefined || raw === "") continue;
    if (field.type === "number") {
      if (!Number.isFinite(Number(raw))) throw invalid(`${field.name} must be a number`);
      input[field.name] = Number(raw);
    } else if (field.type === "boolean") {
      if (raw !== "true" && raw !== "false") throw invalid(`${field.name} must be true or false`);
      input[field.name] = raw === "true";
    } else if (field.type === "json" || field.type === "object" || field.type === "array") {
      try {
        input[field.name] = JSON.parse(raw);
      } catch {
        throw invalid(`${field.name} must be JSON`);
      }
    } else {
      input[field.name] = raw;
    }
  }
  return input;
}

function diffList(label: string, items: unknown[]): Markup {
  if (items.length === 0) return html``;
  return html`<li>${label}: <ul>${items.map((item) => html`<li><code>${typeof item === "string" ? item : JSON.stringify(item)}</code></li>`)}</ul></li>`;
}

function diffView(diff: StateDiff): Markup {
  const side = (end: Record<string, unknown>) => (end.draft ? "the draft" : `version ${String(end.version)}${end.active ? " (active)" : ""}`);
  return html`<section class="diff" aria-label="Structural diff"><h3>Diff: ${side(diff.from)} → ${side(diff.to)}</h3>
${diff.identical ? html`<p>No structural differences.</p>` : html`<ul>
${diffList("Blocks added", diff.blocks.added)}${diffList("Blocks removed", diff.blocks.removed)}${diffList("Blocks changed", diff.blocks.changed)}
${diffList("Edges added", diff.edges.added)}${diffList("Edges removed", diff.edges.removed)}
${diffList("Subflows added", diff.subflows.added)}${diffList("Subflows removed", diff.subflows.removed)}${diffList("Subflows changed", diff.subflows.changed)}
</ul>`}</section>`;
}

function spanTree(spans: TraceSpan[]): Markup {
  return html`<ul class="spans">${spans.map((span) => {
    const output = span.output === undefined ? "" : cellText(span.output);
    return html`<li class="span ${span.status}"><strong>${span.name}</strong> <small>${span.type} · ${span.status} · ${durationText(span.durationMs)}</small>
${span.error ? html`<br><span class="span-error">${span.error}</span>` : ""}${output ? html`<br><code>${output.length > OUTPUT_CHARACTERS ? `${output.slice(0, OUTPUT_CHARACTERS)}…` : output}</code>` : ""}
${span.children?.length ? spanTree(span.children) : ""}</li>`;
  })}</ul>`;
}

/** The runs' search form: status, trigger, a time window and text in the error. */
function runSearch(base: string, filter: RunFilter): Markup {
  return html`<form method="get" action="${base}#runs" class="inline" role="search" aria-label="Search runs">
<label>Status <select name="status"><option value="">any</option>${RUN_STATUSES.map((status) => html`<option${status === filter.status ? " selected" : ""}>${status}</option>`)}</select></label>
<label>Trigger <select name="trigger"><option value="">any</option>${RUN_TRIGGERS.map((trigger) => html`<option${trigger === filter.trigger ? " selected" : ""}>${trigger}</option>`)}</select></label>
<label>From <input type="datetime-local" name="from" value="${filter.from ?? ""}"></label>
<label>To <input type="datetime-local" name="to" value="${filter.to ?? ""}"></label>
<label>Error contains <input name="text" value="${filter.text ?? ""}"></label>
<button type="submit">Search</button>${filter.active ? html` <a href="${base}#runs">Clear</a>` : ""}
</form>`;
}

/**
 * Workflows: the approvals waiting for people, workspaces and their workflows; for each workflow its graph drawn from its state, its
 * deployments with the structural diff and promote/rollback (activate_deployment), a manual run of
 * the draft from its Input Format (POST /api/workflows/{id}/run as a workspace editor), its runs
 * with their trace spans, its webhook subscriptions and deliveries (redeliver_webhook) and its
 * schedules. Managing workflows, workspaces' keys and variables, subscriptions and schedules are in
 * their own files beside this one, mounted here. Every action goes through the project's own SQL
 * functions and endpoints.
 */
export function workflowPages(stack: StackClient): Hono {
  const pages = new Hono();
  pages.route("/", workflowManagementPages(stack));
  pages.route("/workspaces", workspaceSettingsPages(stack));
  pages.route("/", subscriptionPages(stack));
  pages.route("/", schedulePages(stack));

  pages.get("/", async (c) => {
    const workspaces = await stack.json<{ id: string; name: string }[]>("/rest/v1/workspaces?select=id,name&order=name");
    const workflows = await stack.json<(Pick<Workflow, "id" | "workspace_id" | "name" | "updated_at"> & { workflow_deployments: { version: number }[] })[]>(
      "/rest/v1/workflows?select=id,workspace_id,name,updated_at,workflow_deployments(version)&workflow_deployments.is_active=is.true&order=name",
    );
    const content = workspaces.map((workspace) => {
      const own = workflows.filter((workflow) => workflow.workspace_id === workspace.id);
      return html`<section><h2>${workspace.name}</h2><p><a href="/workflows/workspaces/${workspace.id}">API keys and environment variables of ${workspace.name}</a></p>${own.length === 0 ? html`<p>No workflows.</p>` : html`<table class="workflows"><thead><tr><th>Workflow</th><th>Active version</th><th>Updated</th></tr></thead><tbody>
${own.map((workflow) => html`<tr><td><a href="/workflows/${workflow.id}">${workflow.name}</a></td><td>${workflow.workflow_deployments[0]?.version ?? "not deployed"}</td><td>${workflow.updated_at}</td></tr>`)}
</tbody></table>`}</section>`;
    });
    return c.html(layout("Workflows", "Workflows", flashOf(c), html`${await waitingApprovalsSection(stack)}<h2>New workflow</h2>${createWorkflowForm(workspaces)}${content}`));
  });

  pages.get("/runs/:id", async (c) => {
    const id = checkId(c.req.param("id"), "run");
    const [run] = await stack.json<(Execution & { workflows: { name: string } })[]>(`/rest/v1/workflow_executions?select=*,workflows(name)&id=eq.${id}`);
    if (!run) throw new DashboardError(404, `There is no run ${id}`);
    const content = html`<p><a href="/workflows/${run.workflow_id}">Back to ${run.workflows.name}</a></p>
<table class="run"><tbody>
<tr><th>Status</th><td class="run-status">${run.status}</td></tr><tr><th>Trigger</th><td>${run.trigger} (${run.mode})</td></tr>
<tr><th>Version</th><td>${run.deployment_version ?? "draft"}</td></tr><tr><th>Created</th><td>${run.created_at}</td></tr>
<tr><th>Duration</th><td>${durationText(run.duration_ms)}</td></tr>${run.error_message ? html`<tr><th>Error</th><td>${run.error_message}</td></tr>` : ""}
<tr><th>Input</th><td><code>${cellText(run.input)}</code></td></tr><tr><th>Output</th><td><code class="run-output">${cellText(run.output)}</code></td></tr>
</tbody></table>
<h2>Timing</h2>${run.trace_spans?.length ? spanWaterfall(run.trace_spans) : html`<p>No spans recorded.</p>`}
<h2>Trace spans</h2>${run.trace_spans?.length ? spanTree(run.trace_spans) : html`<p>No spans recorded.</p>`}`;
    return c.html(layout(`Run ${id}`, "Workflows", flashOf(c), content));
  });

  pages.get("/:id", async (c) => {
    const id = checkId(c.req.param("id"), "workflow");
    const [workflow] = await stack.json<Workflow[]>(`/rest/v1/workflows?select=*&id=eq.${id}`);
    if (!workflow) throw new DashboardError(404, `There is no workflow ${id}`);
    const runFilter = runFilterOf(c.req.query());
    const [deployments, runs, deliveries] = await Promise.all([
      stack.json<Deployment[]>(`/rest/v1/workflow_deployments?select=version,note,is_active,created_at,activated_at&workflow_id=eq.${id}&order=version.desc`),
      stack.json<Execution[]>(`/rest/v1/workflow_executions?select=id,workflow_id,trigger,mode,status,deployment_version,created_at,duration_ms,error_message&workflow_id=eq.${id}${runFilterQuery(runFilter)}&order=created_at.desc&limit=${RUNS_SHOWN}`),
      stack.json<{ id: string; subscription_id: string; execution_id: string; status: string; attempts: number; redeliveries: number; last_status_code: number | null; last_error: string | null; created_at: string }[]>(`/rest/v1/webhook_deliveries?select=id,subscription_id,execution_id,status,attempts,redeliveries,last_status_code,last_error,created_at&workflow_id=eq.${id}&order=created_at.desc&limit=50`),
    ]);
    const active = deployments.find((deployment) => deployment.is_active);
    const diffVersion = c.req.query("diff");
    let diff: StateDiff | null = null;
    if (diffVersion !== undefined) {
      const version = Number(diffVersion);
      if (!Number.isInteger(version) || version < 1) throw invalid("Choose a version to compare");
      diff = await rpc<StateDiff>(stack, "diff_workflow_deployment", active && active.version !== version
        ? { p_workflow_id: id, p_version: active.version, p_compare_to: version }
        : { p_workflow_id: id, p_version: version });
    } else if (active) {
      diff = await rpc<StateDiff>(stack, "diff_workflow_deployment", { p_workflow_id: id });
    }
    const base = `/workflows/${id}`;
    const triggers = inputTriggers(workflow);
    const content = html`<p><a href="/workflows">All workflows</a>${workflow.description ? html` · ${workflow.description}` : ""}</p>
${manageWorkflowForms(workflow, active !== undefined)}
<h2>Graph (draft)</h2>${graphSvg(workflow.state, `Graph of ${workflow.name}`)}
${blockConfigs(workflow.state)}
<h2>Deployments</h2>
${deployments.length === 0 ? html`<p>Never deployed.</p>` : html`<table class="deployments"><thead><tr><th>Version</th><th>Note</th><th>Created</th><th>Activated</th><th></th></tr></thead><tbody>
${deployments.map((deployment) => html`<tr${deployment.is_active ? html` class="active"` : ""}><td>v${deployment.version}${deployment.is_active ? " (active)" : ""}</td><td>${deployment.note ?? ""}</td><td>${deployment.created_at}</td><td>${deployment.activated_at ?? ""}</td><td>
<a href="${base}?diff=${deployment.version}">Diff</a>
${deployment.is_active ? "" : html`<form method="post" action="${base}/activate"><input type="hidden" name="version" value="${deployment.version}"><button type="submit">${active && deployment.version < active.version ? "Roll back" : "Promote"} to v${deployment.version}</button></form>`}</td></tr>`)}
</tbody></table>`}
${diff ? diffView(diff) : ""}
<h2>Run the draft</h2>
${triggers.length === 0 ? html`<p>No trigger of this workflow takes input; a run starts from its trigger with no input.</p>` : ""}
<form method="post" action="${base}/run" aria-label="Run the draft">
${triggers.length > 1 ? html`<label>Trigger <select name="trigger">${triggers.map((trigger) => html`<option value="${trigger.id}">${trigger.name}</option>`)}</select></label>` : triggers.length === 1 ? html`<input type="hidden" name="trigger" value="${triggers[0].id}">` : ""}
${triggers.flatMap((trigger) => trigger.fields.map((field) => html`<label>${field.name} <small>(${field.type ?? "string"}${triggers.length > 1 ? `, ${trigger.name}` : ""})</small>
${field.type === "json" || field.type === "object" || field.type === "array" ? html`<textarea name="input:${field.name}" rows="2">${field.value === undefined ? "" : JSON.stringify(field.value)}</textarea>` : html`<input name="input:${field.name}" value="${field.value === undefined || field.value === null ? "" : String(field.value)}">`}</label>`))}
<button type="submit">Run</button>
</form>
<h2 id="runs">Runs</h2>
${runSearch(base, runFilter)}
${runs.length === 0 ? html`<p>${runFilter.active ? "No run matches." : "No runs yet."}</p>` : html`<table class="runs"><thead><tr><th>Run</th><th>Status</th><th>Trigger</th><th>Version</th><th>Duration</th><th>Error</th></tr></thead><tbody>
${runs.map((run) => html`<tr><td><a href="/workflows/runs/${run.id}">${run.created_at}</a></td><td>${run.status}</td><td>${run.trigger} (${run.mode})</td><td>${run.deployment_version ?? "draft"}</td><td>${durationText(run.duration_ms)}</td><td>${run.error_message ?? ""}</td></tr>`)}
</tbody></table>`}
${await subscriptionsSection(stack, id)}
<h3>Deliveries</h3>
${deliveries.length === 0 ? html`<p>No deliveries.</p>` : html`<table class="deliveries"><thead><tr><th>Created</th><th>Run</th><th>Status</th><th>Attempts</th><th>Redeliveries</th><th>Last answer</th><th></th></tr></thead><tbody>
${deliveries.map((delivery) => html`<tr data-delivery-id="${delivery.id}"><td>${delivery.created_at}</td><td><a href="/workflows/runs/${delivery.execution_id}">run</a></td><td class="delivery-status">${delivery.status}</td><td>${delivery.attempts}</td><td class="redeliveries">${delivery.redeliveries}</td><td>${delivery.last_status_code ?? ""} ${delivery.last_error ?? ""}</td>
<td><form method="post" action="/workflows/deliveries/${delivery.id}/redeliver"><input type="hidden" name="workflow" value="${id}"><button type="submit">Redeliver</button></form></td></tr>`)}
</tbody></table>`}
${await schedulesSection(stack, id)}`;
    return c.html(layout(workflow.name, "Workflows", flashOf(c), content));
  });

  pages.post("/:id/activate", async (c) => {
    const id = checkId(c.req.param("id"), "workflow");
    const fields = await formFields(c);
    if (!isConfirmed(fields)) {
      const [workflow] = await stack.json<{ name: string; workflow_deployments: { version: number; note: string | null }[] }[]>(`/rest/v1/workflows?select=name,workflow_deployments(version,note)&workflow_deployments.is_active=is.true&id=eq.${id}`);
      const active = workflow?.workflow_deployments[0];
      const version = Number(fields.version);
      // Only a rollback asks first: it takes the newer version's changes out of service.
      if (workflow && active && Number.isInteger(version) && version < active.version) {
        return confirmationPage(c, fields, {
          title: `Roll ${workflow.name} back to v${version}?`,
          lost: html`<p>Every run from now on executes v${version}. The changes v${active.version}${active.note ? ` (${active.note})` : ""} made stop serving API, webhook, schedule and chat runs until it is promoted again; v${active.version} itself and the draft are kept.</p>`,
          button: `Roll back to v${version}`,
          back: `/workflows/${id}`,
        });
      }
    }
    return await act(c, `/workflows/${id}`, async () => {
      const version = Number(fields.version);
      if (!Number.isInteger(version) || version < 1) throw invalid("Choose a version to activate");
      await rpc(stack, "activate_deployment", { p_workflow_id: id, p_version: version });
      return `Version ${version} is now active`;
    });
  });

  pages.post("/:id/run", async (c) => {
    const id = checkId(c.req.param("id"), "workflow");
    let executionId: string | null = null;
    const response = await act(c, `/workflows/${id}`, async () => {
      const [workflow] = await stack.json<Workflow[]>(`/rest/v1/workflows?select=*&id=eq.${id}`);
      if (!workflow) throw new DashboardError(404, `There is no workflow ${id}`);
      const form = await formFields(c);
      const trigger = inputTriggers(workflow).find((candidate) => candidate.id === form.trigger);
      const input = trigger ? inputFromForm(trigger.fields, form) : undefined;
      const member = await memberSession(stack, workflow.workspace_id);
      const answer = await stack.fetch(`/api/workflows/${id}/run`, {
        method: "POST",
        headers: { authorization: `Bearer ${member.accessToken}` },
        json: { ...(trigger ? { triggerBlockId: trigger.id, input } : {}) },
      });
      executionId = answer.headers.get("x-execution-id");
      const body = await answer.json().catch(() => null) as Record<string, unknown> | null;
      if (!answer.ok && !executionId) throw new DashboardError(answer.status, errorInWords(body, answer.status));
      if (!answer.ok) throw new DashboardError(answer.status, `The run failed (${member.email}): ${errorInWords(body, answer.status)}`);
      return `Ran the draft as ${member.email}`;
    });
    if (!executionId) return response;
    const location = new URL(response.headers.get("location") ?? "/", "http://dashboard");
    return c.redirect(`/workflows/runs/${executionId}${location.search}`, 303);
  });

  pages.post("/deliveries/:id/redeliver", async (c) => {
    const id = checkId(c.req.param("id"), "delivery");
    const { workflow } = await formFields(c);
    return await act(c, `/workflows/${checkId(workflow ?? "", "workflow")}`, async () => {
      await rpc(stack, "redeliver_webhook", { p_delivery_id: id });
      return "Queued the delivery again";
    });
  });

  return pages;
}
