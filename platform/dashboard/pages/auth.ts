import { Hono } from "hono";
import { html } from "hono/html";
import { act, flashOf, formFields, invalid } from "../actions.ts";
import { confirmationPage, isConfirmed } from "../confirm.ts";
import { cellText, layout } from "../layout.ts";
import type { StackClient } from "../stack-client.ts";

/** A user as the auth admin API answers it (the fields shown). */
interface AuthUser {
  id: string;
  email: string | null;
  phone: string | null;
  email_confirmed_at: string | null;
  banned_until?: string | null;
  last_sign_in_at: string | null;
  created_at: string;
  app_metadata: Record<string, unknown>;
  user_metadata: Record<string, unknown>;
}

/** Users listed per page. */
const PAGE_SIZE = 50;
/** Users fetched per admin API call while searching. */
const FETCH_SIZE = 1000;
/** The portal's roles (public.app_role). */
const APP_ROLES = ["super_admin", "admin", "technician"];
/** GoTrue's "banned for good": a duration of about a hundred years. */
const BAN_FOREVER = "876000h";
/** A plausible e-mail address; the auth service has the last word. */
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
/** GoTrue's default minimum password length. */
const MIN_PASSWORD = 6;

function isBanned(user: AuthUser): boolean {
  return Boolean(user.banned_until && Date.parse(user.banned_until) > Date.now());
}

/** Every user, page by page, as Studio's user list reads them. */
async function allUsers(stack: StackClient): Promise<AuthUser[]> {
  const users: AuthUser[] = [];
  for (let page = 1; ; page++) {
    const batch = await stack.json<{ users: AuthUser[] }>(`/auth/v1/admin/users?page=${page}&per_page=${FETCH_SIZE}`);
    users.push(...batch.users);
    if (batch.users.length < FETCH_SIZE) return users;
  }
}

function checkPassword(password: string | undefined): string {
  if (!password || password.length < MIN_PASSWORD) throw invalid(`The password must have at least ${MIN_PASSWORD} characters`);
  return password;
}

function checkUserId(id: string): string {
  if (!/^[0-9a-f-]{36}$/i.test(id)) throw invalid("That is not a user id");
  return id;
}

/**
 * Auth: users searched, created, confirmed, banned, deleted and given a new password through the
 * auth admin API, with their portal roles (public.user_roles) and their technician row
 * (public.tecnicos) read and changed through the data API as the service role.
 */
export function authPages(stack: StackClient): Hono {
  const pages = new Hono();

  pages.get("/", async (c) => {
    const query = (c.req.query("q") ?? "").trim().toLowerCase();
    const page = Math.max(1, Number.parseInt(c.req.query("page") ?? "1", 10) || 1);
    const users = (await allUsers(stack))
      .filter((user) => !query || (user.email ?? "").toLowerCase().includes(query) || user.id.includes(query) || (user.phone ?? "").includes(query))
      .sort((a, b) => b.created_at.localeCompare(a.created_at));
    const shown = users.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE);
    const pagesCount = Math.max(1, Math.ceil(users.length / PAGE_SIZE));
    const qs = query ? `&q=${encodeURIComponent(query)}` : "";
    const content = html`<form method="get" action="/auth" class="inline" role="search" aria-label="Search users">
<label>E-mail, phone or id <input name="q" value="${query}"></label><button type="submit">Search</button>${query ? html` <a href="/auth">Clear</a>` : ""}
</form>
<p class="total">${users.length} user${users.length === 1 ? "" : "s"} · page ${page} of ${pagesCount}${page > 1 ? html` · <a href="/auth?page=${page - 1}${qs}">Previous</a>` : ""}${page < pagesCount ? html` · <a href="/auth?page=${page + 1}${qs}">Next</a>` : ""}</p>
<table class="users"><thead><tr><th>E-mail</th><th>Confirmed</th><th>Banned</th><th>Last sign-in</th><th>Created</th></tr></thead><tbody>
${shown.map((user) => html`<tr><td><a href="/auth/users/${user.id}">${user.email || user.phone || user.id}</a></td><td>${user.email_confirmed_at ? "yes" : "no"}</td><td>${isBanned(user) ? `until ${user.banned_until}` : "no"}</td><td>${user.last_sign_in_at ?? "never"}</td><td>${user.created_at}</td></tr>`)}
</tbody></table>
<details><summary>Create a user</summary>
<form method="post" action="/auth/users" aria-label="Create a user">
<label>E-mail <input name="email" type="email" required></label>
<label>Password <input name="password" type="password" required minlength="${MIN_PASSWORD}" autocomplete="new-password"></label>
<label><input type="checkbox" name="confirm" value="yes" checked> Confirm the e-mail address now</label>
<button type="submit">Create user</button>
</form></details>`;
    return c.html(layout("Auth", "Auth", flashOf(c), content));
  });

  pages.post("/users", async (c) => await act(c, "/auth", async () => {
    const { email, password, confirm } = await formFields(c);
    if (!email || !EMAIL.test(email)) throw invalid("Enter a valid e-mail address");
    checkPassword(password);
    const user = await stack.json<AuthUser>("/auth/v1/admin/users", { method: "POST", json: { email, password, email_confirm: confirm === "yes" } });
    return `Created the user ${user.email}`;
  }));

  pages.get("/users/:id", async (c) => {
    const id = checkUserId(c.req.param("id"));
    const user = await stack.json<AuthUser>(`/auth/v1/admin/users/${id}`);
    const roles = await stack.json<{ id: number; role: string; created_at: string }[]>(`/rest/v1/user_roles?select=id,role,created_at&user_id=eq.${id}&order=role`);
    const technicians = await stack.json<Record<string, unknown>[]>(`/rest/v1/tecnicos?select=*&id=eq.${id}`);
    const base = `/auth/users/${id}`;
    const content = html`<p><a href="/auth">All users</a></p>
<table class="user"><tbody>
<tr><th>Id</th><td>${user.id}</td></tr>
<tr><th>E-mail</th><td>${user.email ?? ""}</td></tr>
<tr><th>Confirmed</th><td>${user.email_confirmed_at ?? "no"}</td></tr>
<tr><th>Banned</th><td>${isBanned(user) ? `until ${user.banned_until}` : "no"}</td></tr>
<tr><th>Last sign-in</th><td>${user.last_sign_in_at ?? "never"}</td></tr>
<tr><th>Created</th><td>${user.created_at}</td></tr>
<tr><th>App metadata</th><td><code>${JSON.stringify(user.app_metadata)}</code></td></tr>
<tr><th>User metadata</th><td><code>${JSON.stringify(user.user_metadata)}</code></td></tr>
</tbody></table>
<div class="inline">
${user.email_confirmed_at ? "" : html`<form method="post" action="${base}/confirm"><button type="submit">Confirm e-mail</button></form>`}
<form method="post" action="${base}/ban"><input type="hidden" name="ban" value="${isBanned(user) ? "no" : "yes"}"><button type="submit" class="secondary">${isBanned(user) ? "Lift the ban" : "Ban"}</button></form>
<form method="post" action="${base}/delete"><button type="submit" class="contrast">Delete user</button></form>
</div>
<h2>Reset the password</h2>
<form method="post" action="${base}/password" class="inline" aria-label="Reset the password">
<label>New password <input name="password" type="password" required minlength="${MIN_PASSWORD}" autocomplete="new-password"></label>
<button type="submit">Set password</button>
</form>
<h2>Portal roles</h2>
${roles.length === 0 ? html`<p>No roles.</p>` : html`<table class="roles"><tbody>${roles.map((role) => html`<tr><td>${role.role}</td><td>since ${role.created_at}</td><td><form method="post" action="${base}/roles/revoke"><input type="hidden" name="role" value="${role.role}"><button type="submit" class="secondary">Revoke ${role.role}</button></form></td></tr>`)}</tbody></table>`}
<form method="post" action="${base}/roles" class="inline" aria-label="Grant a role">
<label>Role <select name="role">${APP_ROLES.map((role) => html`<option>${role}</option>`)}</select></label><button type="submit">Grant role</button>
</form>
<h2>Technician (gamification)</h2>
${technicians.length === 0 ? html`<p>No technician row.</p>` : html`<table class="technician"><tbody>${Object.entries(technicians[0]).map(([key, value]) => html`<tr><th>${key}</th><td>${cellText(value)}</td></tr>`)}</tbody></table>
<p><a href="/gamification/technicians/${id}">History and badges</a> · <a href="/tables/public/tecnicos/edit?key=${encodeURIComponent(JSON.stringify({ id }))}">Edit the row</a></p>`}`;
    return c.html(layout(user.email ?? user.id, "Auth", flashOf(c), content));
  });

  pages.post("/users/:id/confirm", async (c) => {
    const id = c.req.param("id");
    return await act(c, `/auth/users/${id}`, async () => {
      await stack.json(`/auth/v1/admin/users/${checkUserId(id)}`, { method: "PUT", json: { email_confirm: true } });
      return "Confirmed the e-mail address";
    });
  });

  pages.post("/users/:id/ban", async (c) => {
    const id = c.req.param("id");
    return await act(c, `/auth/users/${id}`, async () => {
      const { ban } = await formFields(c);
      await stack.json(`/auth/v1/admin/users/${checkUserId(id)}`, { method: "PUT", json: { ban_duration: ban === "yes" ? BAN_FOREVER : "none" } });
      return ban === "yes" ? "Banned the user" : "Lifted the ban";
    });
  });

  pages.post("/users/:id/password", async (c) => {
    const id = c.req.param("id");
    return await act(c, `/auth/users/${id}`, async () => {
      const { password } = await formFields(c);
      await stack.json(`/auth/v1/admin/users/${checkUserId(id)}`, { method: "PUT", json: { password: checkPassword(password) } });
      return "Set the new password";
    });
  });

  pages.post("/users/:id/delete", async (c) => {
    const id = c.req.param("id");
    const fields = await formFields(c);
    if (!isConfirmed(fields)) {
      const user = await stack.json<{ email: string | null }>(`/auth/v1/admin/users/${checkUserId(id)}`);
      return confirmationPage(c, fields, {
        title: `Delete the user ${user.email ?? id}?`,
        lost: html`<p>The account <code>${user.email ?? id}</code> is deleted for good: its sign-in, sessions and roles, and whatever its rows' foreign keys delete with it.</p>`,
        button: "Delete the user",
        back: `/auth/users/${id}`,
      });
    }
    return await act(c, `/auth/users/${id}`, async () => {
      await stack.json(`/auth/v1/admin/users/${checkUserId(id)}`, { method: "DELETE" });
      return "Deleted the user";
    }, "/auth");
  });

  pages.post("/users/:id/roles", async (c) => {
    const id = c.req.param("id");
    return await act(c, `/auth/users/${id}`, async () => {
      const { role } = await formFields(c);
      if (!role || !APP_ROLES.includes(role)) throw invalid("Choose one of the portal's roles");
      await stack.json("/rest/v1/user_roles", { method: "POST", json: { user_id: checkUserId(id), role }, headers: { prefer: "return=minimal" } });
      return `Granted ${role}`;
    });
  });

  pages.post("/users/:id/roles/revoke", async (c) => {
    const id = c.req.param("id");
    const fields = await formFields(c);
    if (!isConfirmed(fields) && fields.role && APP_ROLES.includes(fields.role)) {
      return confirmationPage(c, fields, {
        title: `Revoke ${fields.role}?`,
        lost: html`<p>The user loses the <code>${fields.role}</code> role and everything it lets them read and do, from their next request.</p>`,
        button: `Revoke ${fields.role} for good`,
        back: `/auth/users/${id}`,
      });
    }
    return await act(c, `/auth/users/${id}`, async () => {
      const { role } = fields;
      if (!role || !APP_ROLES.includes(role)) throw invalid("Choose one of the portal's roles");
      await stack.json(`/rest/v1/user_roles?user_id=eq.${checkUserId(id)}&role=eq.${role}`, { method: "DELETE" });
      return `Revoked ${role}`;
    });
  });

  return pages;
}
