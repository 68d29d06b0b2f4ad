import { Hono } from "hono";
import { html } from "hono/html";
import { act, flashOf, formFields, invalid } from "../actions.ts";
import { confirmationPage, isConfirmed } from "../confirm.ts";
import { DashboardError } from "../errors.ts";
import { layout, type Markup } from "../layout.ts";
import type { StackClient } from "../stack-client.ts";
import { checkId, countRows, rpc } from "../workflows/stack-rpc.ts";

/** Longest workflow name the table accepts (its check constraint). */
export const NAME_CHARACTERS = 200;
/** Longest draft state, as JSON text, the editor sends to the validator. */
export const STATE_CHARACTERS = 500_000;
/** Longest deployment note. */
export const NOTE_CHARACTERS = 500;

/** One issue as validate_workflow_state answers it. */
interface StateIssue {
  code: string;
  message: string;
  blockId?: string;
  blockName?: string;
  edgeId?: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A workflow's name from a form: trimmed, 1 to NAME_CHARACTERS characters. */
function nameOf(fields: Record<string, string>): string {
  const name = (fields.name ?? "").trim();
  if (name.length === 0) throw invalid("Give the workflow a name");
  if (name.length > NAME_CHARACTERS) throw invalid(`A workflow's name has at most ${NAME_CHARACTERS} characters`);
  return name;
}

async function workflowNamed(stack: StackClient, id: string): Promise<{ id: string; name: string; workspace_id: string; state: unknown }> {
  const [workflow] = await stack.json<{ id: string; name: string; workspace_id: string; state: unknown }[]>(`/rest/v1/workflows?select=id,name,workspace_id,state&id=eq.${id}`);
  if (!workflow) throw new DashboardError(404, `There is no workflow ${id}`);
  return workflow;
}

function issueList(label: string, issues: StateIssue[]): Markup {
  return html`<section class="issues" aria-label="${label}"><h2>${label}</h2>
${issues.length === 0 ? html`<p>None.</p>` : html`<ul>${issues.map((issue) => html`<li><strong>${issue.blockName ?? issue.blockId ?? issue.edgeId ?? "workflow"}</strong>: ${issue.message} <small>(${issue.code})</small></li>`)}</ul>`}</section>`;
}

/** The JSON editor's page: the text as typed and, once checked, the validator's issues. */
function stateEditor(workflow: { id: string; name: string }, text: string, checked: { save: StateIssue[]; deploy: StateIssue[] } | null): Markup {
  return html`<p><a href="/workflows/${workflow.id}">Back to ${workflow.name}</a></p>
<p>The draft as JSON ({blocks, edges, loops, parallels}, docs/workflows.md). <em>Check</em> asks the database's validator without saving; <em>Save</em> stores the draft only when it has no save-mode issue.</p>
${checked ? html`${issueList("Issues that stop saving", checked.save)}${issueList("Issues that would stop a deploy", checked.deploy)}` : ""}
<form method="post" action="/workflows/${workflow.id}/state" aria-label="Edit the draft">
<label for="state">State (JSON)</label>
<textarea id="state" name="state" rows="24" class="sql" spellcheck="false" required>${text}</textarea>
<div class="inline"><button type="submit" name="intent" value="check" class="secondary">Check</button> <button type="submit" name="intent" value="save">Save</button></div>
</form>`;
}

/**
 * Managing workflows from the console: create, rename and delete (behind a confirmation naming the
 * runs, deployments, subscriptions and schedules that go with it), edit the draft as JSON with the
 * database validator's issues shown before saving, deploy and undeploy. Everything goes through the
 * data API (the workflows table and its SQL functions) with the service_role key, as the rest of
 * the dashboard does; the database's own checks (name, state validation) stay the authority.
 */
export function workflowManagementPages(stack: StackClient): Hono {
  const pages = new Hono();

  pages.post("/create", async (c) => {
    const fields = await formFields(c);
    let created: string | null = null;
    const response = await act(c, "/workflows", async () => {
      const workspace = fields.workspace ?? "";
      if (!UUID.test(workspace)) throw invalid("Choose a workspace");
      const [row] = await stack.json<{ id: string; name: string }[]>("/rest/v1/workflows?select=id,name", {
        method: "POST",
        headers: { prefer: "return=representation" },
        json: { workspace_id: workspace, name: nameOf(fields) },
      });
      created = row.id;
      return `Created ${row.name}`;
    });
    if (!created) return response;
    const location = new URL(response.headers.get("location") ?? "/", "http://dashboard");
    return c.redirect(`/workflows/${created}${location.search}`, 303);
  });

  pages.post("/:id/rename", async (c) => {
    const id = checkId(c.req.param("id"), "workflow");
    const fields = await formFields(c);
    return await act(c, `/workflows/${id}`, async () => {
      const name = nameOf(fields);
      const rows = await stack.json<unknown[]>(`/rest/v1/workflows?id=eq.${id}&select=id`, { method: "PATCH", headers: { prefer: "return=representation" }, json: { name } });
      if (rows.length === 0) throw new DashboardError(404, `There is no workflow ${id}`);
      return `Renamed to ${name}`;
    });
  });

  pages.post("/:id/delete", async (c) => {
    const id = checkId(c.req.param("id"), "workflow");
    const fields = await formFields(c);
    const workflow = await workflowNamed(stack, id);
    if (!isConfirmed(fields)) {
      const filter = `workflow_id=eq.${id}`;
      const [runs, deployments, subscriptions, schedules] = await Promise.all(
        ["workflow_executions", "workflow_deployments", "webhook_subscriptions", "workflow_schedules"].map((table) => countRows(stack, table, filter)),
      );
      return confirmationPage(c, fields, {
        title: `Delete ${workflow.name}?`,
        lost: html`<p>The workflow, its draft and everything recorded for it go for good:</p><ul>
<li>${runs} run${runs === 1 ? "" : "s"} with their logs and trace spans;</li>
<li>${deployments} deployment${deployments === 1 ? "" : "s"} (its API, webhook, schedule and chat triggers stop answering);</li>
<li>${subscriptions} webhook subscription${subscriptions === 1 ? "" : "s"} and their deliveries;</li>
<li>${schedules} schedule${schedules === 1 ? "" : "s"}.</li></ul>`,
        button: "Delete workflow",
        back: `/workflows/${id}`,
      });
    }
    return await act(c, `/workflows/${id}`, async () => {
      await stack.json(`/rest/v1/workflows?id=eq.${id}`, { method: "DELETE" });
      return `Deleted ${workflow.name}`;
    }, "/workflows");
  });

  pages.get("/:id/state", async (c) => {
    const workflow = await workflowNamed(stack, checkId(c.req.param("id"), "workflow"));
    return c.html(layout(`Edit the draft of ${workflow.name}`, "Workflows", flashOf(c), stateEditor(workflow, JSON.stringify(workflow.state, null, 2), null)));
  });

  pages.post("/:id/state", async (c) => {
    const workflow = await workflowNamed(stack, checkId(c.req.param("id"), "workflow"));
    const fields = await formFields(c);
    const text = fields.state ?? "";
    const title = `Edit the draft of ${workflow.name}`;
    const again = (flash: { error?: string; notice?: string }, checked: { save: StateIssue[]; deploy: StateIssue[] } | null, status: 200 | 400 | 422) =>
      c.html(layout(title, "Workflows", flash, stateEditor(workflow, text, checked)), status);
    if (text.length > STATE_CHARACTERS) return again({ error: `A draft has at most ${STATE_CHARACTERS.toLocaleString("en")} characters of JSON` }, null, 400);
    let state: unknown;
    try {
      state = JSON.parse(text);
    } catch (error) {
      return again({ error: `The draft is not JSON: ${(error as Error).message}` }, null, 400);
    }
    if (!state || typeof state !== "object" || Array.isArray(state)) return again({ error: "The draft is a JSON object: {blocks, edges, loops, parallels}" }, null, 400);
    const [save, deploy] = await Promise.all(["save", "deploy"].map((mode) => rpc<StateIssue[]>(stack, "validate_workflow_state", { p_state: state, p_mode: mode })));
    const checked = { save, deploy };
    if (fields.intent !== "save") return again({ notice: save.length === 0 ? "The draft can be saved" : undefined }, checked, 200);
    if (save.length > 0) return again({ error: `Not saved: the validator found ${save.length} issue${save.length === 1 ? "" : "s"}` }, checked, 422);
    try {
      await stack.json(`/rest/v1/workflows?id=eq.${workflow.id}`, { method: "PATCH", json: { state } });
    } catch (error) {
      // The table's own check has the last word (a race with another save, a limit the validator leaves to it).
      if (error instanceof DashboardError) return again({ error: `Not saved: ${error.message}` }, checked, 422);
      throw error;
    }
    return c.redirect(`/workflows/${workflow.id}?notice=${encodeURIComponent("Saved the draft")}`, 303);
  });

  pages.post("/:id/deploy", async (c) => {
    const id = checkId(c.req.param("id"), "workflow");
    const fields = await formFields(c);
    return await act(c, `/workflows/${id}`, async () => {
      const note = (fields.note ?? "").trim();
      if (note.length > NOTE_CHARACTERS) throw invalid(`A deployment note has at most ${NOTE_CHARACTERS} characters`);
      const deployment = await rpc<{ version: number }>(stack, "deploy_workflow", { p_workflow_id: id, p_note: note || null });
      return `Deployed the draft as v${deployment.version}`;
    });
  });

  pages.post("/:id/undeploy", async (c) => {
    const id = checkId(c.req.param("id"), "workflow");
    const fields = await formFields(c);
    if (!isConfirmed(fields)) {
      const workflow = await workflowNamed(stack, id);
      return confirmationPage(c, fields, {
        title: `Undeploy ${workflow.name}?`,
        lost: html`<p>No version stays active: its API, webhook, schedule and chat triggers stop starting runs until a version is promoted again. The deployments and the draft are kept.</p>`,
        button: "Undeploy",
        back: `/workflows/${id}`,
      });
    }
    return await act(c, `/workflows/${id}`, async () => {
      await rpc(stack, "undeploy_workflow", { p_workflow_id: id });
      return "No version is active now";
    });
  });

  return pages;
}

/** The form that creates a workflow in one of the workspaces, on the Workflows page. */
export function createWorkflowForm(workspaces: { id: string; name: string }[]): Markup {
  if (workspaces.length === 0) return html``;
  return html`<form method="post" action="/workflows/create" class="inline" aria-label="Create a workflow">
<label>Workspace <select name="workspace">${workspaces.map((workspace) => html`<option value="${workspace.id}">${workspace.name}</option>`)}</select></label>
<label>Name <input name="name" required maxlength="${NAME_CHARACTERS}"></label>
<button type="submit">Create workflow</button>
</form>`;
}

/** The management forms on a workflow's page: rename, edit the draft, deploy, undeploy, delete. */
export function manageWorkflowForms(workflow: { id: string; name: string }, deployed: boolean): Markup {
  const base = `/workflows/${workflow.id}`;
  return html`<section aria-label="Manage the workflow"><h2>Manage</h2>
<form method="post" action="${base}/rename" class="inline" aria-label="Rename the workflow">
<label>New name <input name="name" required maxlength="${NAME_CHARACTERS}" value="${workflow.name}"></label><button type="submit">Rename</button>
</form>
<form method="post" action="${base}/deploy" class="inline" aria-label="Deploy the draft">
<label>Deployment note <input name="note" maxlength="${NOTE_CHARACTERS}"></label><button type="submit">Deploy the draft</button>
</form>
<div class="inline"><a href="${base}/state">Edit the draft as JSON</a>
${deployed ? html`<form method="post" action="${base}/undeploy"><button type="submit" class="secondary">Undeploy</button></form>` : ""}
<form method="post" action="${base}/delete"><button type="submit" class="danger">Delete workflow</button></form></div>
</section>`;
}
