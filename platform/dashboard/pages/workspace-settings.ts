import type { Context } from "hono";
import { Hono } from "hono";
import { html } from "hono/html";
import { act, flashOf, formFields, invalid } from "../actions.ts";
import { confirmationPage, isConfirmed } from "../confirm.ts";
import { DashboardError } from "../errors.ts";
import { type Flash, layout, type Markup } from "../layout.ts";
import type { StackClient } from "../stack-client.ts";
import { ADMIN_ROLES, memberSession } from "../workflows/run-as-member.ts";
import { checkId, rpc } from "../workflows/stack-rpc.ts";

/** Longest API key name (the table's check). */
export const KEY_NAME_CHARACTERS = 100;
/** Longest environment variable name (the table's check). */
export const VARIABLE_NAME_CHARACTERS = 128;
/** Longest environment variable value the dashboard sends. */
export const VARIABLE_VALUE_CHARACTERS = 10_000;

interface ApiKey {
  id: string;
  name: string;
  prefix: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

/** A newly created key, shown on the page that answers the form and nowhere else. */
interface CreatedKey {
  name: string;
  key: string;
}

async function workspaceOf(stack: StackClient, id: string): Promise<{ id: string; name: string }> {
  const [workspace] = await stack.json<{ id: string; name: string }[]>(`/rest/v1/workspaces?select=id,name&id=eq.${id}`);
  if (!workspace) throw new DashboardError(404, `There is no workspace ${id}`);
  return workspace;
}

/**
 * A workspace's settings page. A new key is rendered into this one answer (not put in a redirect's
 * query, which browsers keep in their history), so it is shown once and never again.
 */
async function settingsPage(c: Context, stack: StackClient, id: string, flash: Flash, created: CreatedKey | null = null): Promise<Response> {
  const workspace = await workspaceOf(stack, id);
  const [keys, variables] = await Promise.all([
    stack.json<ApiKey[]>(`/rest/v1/api_keys?select=id,name,prefix,created_at,last_used_at,revoked_at&workspace_id=eq.${id}&order=created_at.desc`),
    stack.json<{ id: string; name: string; updated_at: string }[]>(`/rest/v1/environment_variables?select=id,name,updated_at&workspace_id=eq.${id}&order=name`),
  ]);
  const base = `/workflows/workspaces/${id}`;
  const content: Markup = html`<p><a href="/workflows">All workflows</a></p>
<h2>API keys</h2>
${created ? html`<section class="new-key notice" aria-label="New API key"><p>The key <strong>${created.name}</strong>, shown this once (only its hash is stored): copy it now.</p><p><code class="api-key">${created.key}</code></p></section>` : ""}
<form method="post" action="${base}/keys" class="inline" aria-label="Create an API key">
<label>Key name <input name="name" required maxlength="${KEY_NAME_CHARACTERS}"></label><button type="submit">Create key</button>
</form>
${keys.length === 0 ? html`<p>No workspace keys.</p>` : html`<table class="api-keys"><thead><tr><th>Name</th><th>Prefix</th><th>Created</th><th>Last used</th><th>Revoked</th><th></th></tr></thead><tbody>
${keys.map((key) => html`<tr data-key-id="${key.id}"><td>${key.name}</td><td><code>${key.prefix}…</code></td><td>${key.created_at}</td><td>${key.last_used_at ?? "never"}</td><td>${key.revoked_at ?? ""}</td>
<td>${key.revoked_at ? "" : html`<form method="post" action="${base}/keys/${key.id}/revoke"><button type="submit" class="danger">Revoke</button></form>`}</td></tr>`)}
</tbody></table>`}
<h2>Environment variables</h2>
<p>Values are write-only: stored encrypted, used by runs as <code>{{NAME}}</code>, never shown back. Setting a name that exists replaces its value.</p>
<form method="post" action="${base}/variables" class="inline" aria-label="Set an environment variable" autocomplete="off">
<label>Variable name <input name="name" required maxlength="${VARIABLE_NAME_CHARACTERS}" pattern="[A-Za-z_][A-Za-z0-9_]*"></label>
<label>Value <input type="password" name="value" required maxlength="${VARIABLE_VALUE_CHARACTERS}" autocomplete="new-password"></label><button type="submit">Set variable</button>
</form>
${variables.length === 0 ? html`<p>No variables.</p>` : html`<table class="variables"><thead><tr><th>Name</th><th>Value</th><th>Updated</th><th></th></tr></thead><tbody>
${variables.map((variable) => html`<tr data-variable="${variable.name}"><td><code>${variable.name}</code></td><td>•••• (write-only)</td><td>${variable.updated_at}</td>
<td><form method="post" action="${base}/variables/${variable.id}/delete"><button type="submit" class="danger">Delete</button></form></td></tr>`)}
</tbody></table>`}`;
  return c.html(layout(`Workspace ${workspace.name}`, "Workflows", flash, content), created ? 201 : 200);
}

/**
 * A workspace's API keys and environment variables. Keys are created and revoked by
 * create_api_key / revoke_api_key, which act only for a signed-in user, so the dashboard signs in
 * as the workspace's owner (else an admin) as a manual run does; variables are set with
 * set_environment_variable and deleted through the data API as the service role.
 */
export function workspaceSettingsPages(stack: StackClient): Hono {
  const pages = new Hono();

  pages.get("/:id", async (c) => await settingsPage(c, stack, checkId(c.req.param("id"), "workspace"), flashOf(c)));

  pages.post("/:id/keys", async (c) => {
    const id = checkId(c.req.param("id"), "workspace");
    const name = ((await formFields(c)).name ?? "").trim();
    try {
      if (name.length === 0) throw invalid("Give the key a name");
      if (name.length > KEY_NAME_CHARACTERS) throw invalid(`A key's name has at most ${KEY_NAME_CHARACTERS} characters`);
      await workspaceOf(stack, id);
      const admin = await memberSession(stack, id, ADMIN_ROLES);
      const created = await stack.json<{ key: string }>("/rest/v1/rpc/create_api_key", {
        method: "POST",
        headers: { authorization: `Bearer ${admin.accessToken}` },
        json: { p_name: name, p_workspace_id: id },
      });
      return await settingsPage(c, stack, id, { notice: `Created the key ${name} as ${admin.email}` }, { name, key: created.key });
    } catch (error) {
      if (error instanceof DashboardError && error.status < 500) return c.redirect(`/workflows/workspaces/${id}?error=${encodeURIComponent(error.message)}`, 303);
      throw error;
    }
  });

  pages.post("/:id/keys/:key/revoke", async (c) => {
    const id = checkId(c.req.param("id"), "workspace");
    const keyId = checkId(c.req.param("key"), "API key");
    const fields = await formFields(c);
    const [key] = await stack.json<ApiKey[]>(`/rest/v1/api_keys?select=id,name,prefix,created_at,last_used_at,revoked_at&id=eq.${keyId}&workspace_id=eq.${id}`);
    if (!key) throw new DashboardError(404, `There is no API key ${keyId} in this workspace`);
    if (!isConfirmed(fields)) {
      return confirmationPage(c, fields, {
        title: `Revoke the key ${key.name}?`,
        lost: html`<p>Every caller using <code>${key.prefix}…</code> (last used ${key.last_used_at ?? "never"}) is refused from now on; a revoked key cannot be restored, only replaced by a new one.</p>`,
        button: "Revoke key",
        back: `/workflows/workspaces/${id}`,
      });
    }
    return await act(c, `/workflows/workspaces/${id}`, async () => {
      const admin = await memberSession(stack, id, ADMIN_ROLES);
      await stack.json("/rest/v1/rpc/revoke_api_key", { method: "POST", headers: { authorization: `Bearer ${admin.accessToken}` }, json: { p_id: keyId } });
      return `Revoked the key ${key.name}`;
    });
  });

  pages.post("/:id/variables", async (c) => {
    const id = checkId(c.req.param("id"), "workspace");
    const fields = await formFields(c);
    return await act(c, `/workflows/workspaces/${id}`, async () => {
      const name = (fields.name ?? "").trim();
      const value = fields.value ?? "";
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) || name.length > VARIABLE_NAME_CHARACTERS) throw invalid(`A variable's name is letters, digits and _, not starting with a digit, at most ${VARIABLE_NAME_CHARACTERS} characters`);
      if (value.length === 0) throw invalid("Give the variable a value");
      if (value.length > VARIABLE_VALUE_CHARACTERS) throw invalid(`A variable's value has at most ${VARIABLE_VALUE_CHARACTERS.toLocaleString("en")} characters`);
      await workspaceOf(stack, id);
      await rpc(stack, "set_environment_variable", { p_workspace_id: id, p_name: name, p_value: value });
      return `Set ${name}`;
    });
  });

  pages.post("/:id/variables/:variable/delete", async (c) => {
    const id = checkId(c.req.param("id"), "workspace");
    const variableId = checkId(c.req.param("variable"), "environment variable");
    const fields = await formFields(c);
    const [variable] = await stack.json<{ name: string }[]>(`/rest/v1/environment_variables?select=name&id=eq.${variableId}&workspace_id=eq.${id}`);
    if (!variable) throw new DashboardError(404, `There is no environment variable ${variableId} in this workspace`);
    if (!isConfirmed(fields)) {
      return confirmationPage(c, fields, {
        title: `Delete the variable ${variable.name}?`,
        lost: html`<p>Its value is gone for good (it cannot be read back to keep a copy), and workflows that use <code>{{${variable.name}}}</code> fail until it is set again.</p>`,
        button: "Delete variable",
        back: `/workflows/workspaces/${id}`,
      });
    }
    return await act(c, `/workflows/workspaces/${id}`, async () => {
      await stack.json(`/rest/v1/environment_variables?id=eq.${variableId}`, { method: "DELETE" });
      return `Deleted ${variable.name}`;
    });
  });

  return pages;
}
