import { AuthApiError, AuthWeakPasswordError, createClient, isAuthSessionMissingError, type Session, type SupabaseClient } from "@supabase/supabase-js";
import { randomUUID } from "node:crypto";
import postgres from "postgres";
import { afterAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { fetchFrom, simulatedClientAddress } from "../helpers/clients.ts";
import { env } from "../helpers/env.ts";

// Every client connects from a loopback address of its own (the gateway counts per TCP peer), so
// this file's many auth calls never share one per-minute rate-limit bucket.
function client(key: string): SupabaseClient {
  return createClient(env.url, key, {
    auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
    global: { fetch: fetchFrom(simulatedClientAddress()) },
    // Node 20 has no global WebSocket; supabase-js builds its realtime client eagerly.
    realtime: { transport: WebSocket as never },
  });
}
const anon = () => client(env.anonKey);
const admin = () => client(env.serviceRoleKey).auth.admin;

const db = postgres(env.dbUrl, { max: 2, onnotice: () => {} });
afterAll(() => db.end());

const email = () => `auth-${randomUUID()}@example.test`;
const password = () => `pw-${randomUUID()}`;

/** Decodes a JWT payload without verifying it (the service's signature is checked by the gateway tests). */
function claimsOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split(".")[1], "base64url").toString("utf8"));
}

/** A direct call to the auth API through the gateway (from a client address of its own), for status codes, headers and raw bodies. */
async function authFetch(path: string, init: RequestInit & { key?: string; bearer?: string; version?: boolean } = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set("apikey", init.key ?? env.anonKey);
  headers.set("authorization", `Bearer ${init.bearer ?? init.key ?? env.anonKey}`);
  if (init.version !== false) headers.set("x-supabase-api-version", "2024-01-01");
  if (init.body !== undefined) headers.set("content-type", "application/json");
  return fetchFrom(simulatedClientAddress())(`${env.url}/auth/v1${path}`, { ...init, headers });
}

/** A response body as loosely typed JSON (the assertions check its shape). */
async function bodyOf<T = Record<string, unknown>>(response: Response): Promise<T> {
  return (await response.json()) as T;
}

/** Signs up a fresh user through supabase-js and returns its client and session. */
async function signedUpUser(data: Record<string, unknown> = {}) {
  const supabase = anon();
  const credentials = { email: email(), password: password() };
  const { data: result, error } = await supabase.auth.signUp({ ...credentials, options: { data } });
  if (error) throw error;
  return { supabase, ...credentials, session: result.session as Session, id: result.user!.id };
}

/** Creates a confirmed user with the admin API. */
async function adminUser(attributes: Record<string, unknown> = {}) {
  const credentials = { email: email(), password: password() };
  const { data, error } = await admin().createUser({ ...credentials, email_confirm: true, ...attributes });
  if (error) throw error;
  return { ...credentials, id: data.user.id, user: data.user };
}

async function sessionCount(userId: string): Promise<number> {
  const [{ count }] = await db<{ count: number }[]>`select count(*)::int as count from auth.sessions where user_id = ${userId}`;
  return count;
}

describe("sign-up", () => {
  it("A new user gets a full session at once, and is stored exactly as GoTrue stores users", async () => {
    const { session, id, email: address } = await signedUpUser({ full_name: "Ana Lima" });
    expect(session).toMatchObject({ token_type: "bearer", expires_in: 3600 });
    expect(session.refresh_token).toMatch(/^[a-z2-7]{12}$/);
    expect(session.expires_at).toBeGreaterThan(Date.now() / 1000 + 3500);
    expect(session.user).toMatchObject({
      id,
      aud: "authenticated",
      role: "authenticated",
      email: address,
      phone: "",
      app_metadata: { provider: "email", providers: ["email"] },
      user_metadata: { full_name: "Ana Lima", email: address, email_verified: true, phone_verified: false, sub: id },
      is_anonymous: false,
    });
    expect(session.user.email_confirmed_at).toBeTruthy();
    expect(session.user.last_sign_in_at).toBeTruthy();
    expect(session.user.identities).toHaveLength(1);
    expect(session.user.identities![0]).toMatchObject({ id, user_id: id, provider: "email", email: address });

    const [row] = await db`select * from auth.users where id = ${id}`;
    expect(row).toMatchObject({
      instance_id: "00000000-0000-0000-0000-000000000000",
      aud: "authenticated",
      role: "authenticated",
      email: address,
      phone: null,
      confirmation_token: "",
      recovery_token: "",
      email_change_token_new: "",
      email_change: "",
      email_change_token_current: "",
      reauthentication_token: "",
      is_sso_user: false,
      is_anonymous: false,
    });
    expect(row.encrypted_password).toMatch(/^\$2a\$10\$/);
    expect(row.raw_app_meta_data).toEqual({ provider: "email", providers: ["email"] });
    expect(row.email_confirmed_at).toBeInstanceOf(Date);
    expect(row.last_sign_in_at).toBeInstanceOf(Date);
    const [identity] = await db`select * from auth.identities where user_id = ${id}`;
    expect(identity).toMatchObject({ provider: "email", provider_id: id, email: address });
    expect(identity.identity_data).toEqual({ sub: id, email: address, email_verified: false, phone_verified: false, full_name: "Ana Lima" });

    const claims = claimsOf(session.access_token);
    expect(claims).toMatchObject({
      iss: `${env.url}/auth/v1`,
      sub: id,
      aud: "authenticated",
      email: address,
      phone: "",
      role: "authenticated",
      aal: "aal1",
      app_metadata: { provider: "email", providers: ["email"] },
      user_metadata: { full_name: "Ana Lima" },
      is_anonymous: false,
    });
    expect(Number(claims.exp) - Number(claims.iat)).toBe(3600);
    expect(claims.amr).toEqual([{ method: "password", timestamp: expect.any(Number) }]);
    const [stored] = await db`
      select s.aal::text as aal, rt.revoked, rt.parent, rt.user_id, c.authentication_method
      from auth.sessions s
      join auth.refresh_tokens rt on rt.session_id = s.id
      join auth.mfa_amr_claims c on c.session_id = s.id
      where s.id = ${claims.session_id as string}`;
    expect(stored).toEqual({ aal: "aal1", revoked: false, parent: null, user_id: id, authentication_method: "password" });
  });

  it("Signing up again with a registered email answers 422 user_already_exists", async () => {
    const { email: address } = await signedUpUser();
    const { data, error } = await anon().auth.signUp({ email: address, password: password() });
    expect(error).toBeInstanceOf(AuthApiError);
    expect(error).toMatchObject({ status: 422, code: "user_already_exists", message: "User already registered" });
    expect(data.session).toBeNull();
  });

  it("A short password answers 422 weak_password with its reasons and creates nobody", async () => {
    const address = email();
    const { error } = await anon().auth.signUp({ email: address, password: "12345" });
    expect(error).toBeInstanceOf(AuthWeakPasswordError);
    expect(error).toMatchObject({ status: 422, code: "weak_password", message: "Password should be at least 6 characters.", reasons: ["length"] });
    expect(await db`select 1 from auth.users where email = ${address}`).toHaveLength(0);
  });

  it("An invalid email answers 400 validation_failed", async () => {
    const { error } = await anon().auth.signUp({ email: "not-an-email", password: password() });
    expect(error).toMatchObject({ status: 400, code: "validation_failed", message: "Unable to validate email address: invalid format" });
  });

  it("Malformed JSON answers 400 bad_json in the versioned format, and the legacy format without the version header", async () => {
    const versioned = await authFetch("/signup", { method: "POST", body: "{not json" });
    expect(versioned.status).toBe(400);
    expect(versioned.headers.get("x-supabase-api-version")).toBe("2024-01-01");
    expect(versioned.headers.get("x-sb-error-code")).toBe("bad_json");
    const body = await bodyOf(versioned);
    expect(body).toEqual({ code: "bad_json", message: expect.stringMatching(/^Could not parse request body as JSON: /) });

    const legacy = await authFetch("/signup", { method: "POST", body: "{not json", version: false });
    expect(legacy.status).toBe(400);
    expect(legacy.headers.get("x-supabase-api-version")).toBeNull();
    expect(legacy.headers.get("x-sb-error-code")).toBe("bad_json");
    expect(await bodyOf(legacy)).toEqual({ code: 400, error_code: "bad_json", msg: expect.stringMatching(/^Could not parse request body as JSON: /) });

    const wrongType = await authFetch("/signup", { method: "POST", body: JSON.stringify({ email: 42, password: "secret123" }) });
    expect(wrongType.status).toBe(400);
    expect((await bodyOf(wrongType)).code).toBe("bad_json");
  });
});

describe("sign-in with password", () => {
  it("The password grant answers a session and opens a new session row", async () => {
    const user = await adminUser();
    const { data, error } = await anon().auth.signInWithPassword({ email: user.email.toUpperCase(), password: user.password });
    expect(error).toBeNull();
    expect(data.session).toMatchObject({ token_type: "bearer", expires_in: 3600, user: { id: user.id, email: user.email } });
    expect(data.session!.user.last_sign_in_at).toBeTruthy();
    expect(claimsOf(data.session!.access_token)).toMatchObject({ sub: user.id, role: "authenticated", session_id: expect.any(String) });
    expect(await sessionCount(user.id)).toBe(1);
    const [audit] = await db`select payload from auth.audit_log_entries where payload->>'actor_id' = ${user.id} and payload->>'action' = 'login'`;
    expect(audit.payload).toMatchObject({ actor_username: user.email, log_type: "account", traits: { provider: "email" } });
  });

  it("A wrong password and an unknown email both answer 400 invalid_credentials \"Invalid login credentials\"", async () => {
    const user = await adminUser();
    for (const attempt of [{ email: user.email, password: "wrong-password" }, { email: email(), password: user.password }]) {
      const { data, error } = await anon().auth.signInWithPassword(attempt);
      expect(error).toBeInstanceOf(AuthApiError);
      expect(error).toMatchObject({ status: 400, code: "invalid_credentials", message: "Invalid login credentials" });
      expect(data.session).toBeNull();
    }
    const raw = await authFetch("/token?grant_type=password", { method: "POST", body: JSON.stringify({ email: user.email, password: "nope-nope" }) });
    expect(raw.status).toBe(400);
    expect(await bodyOf(raw)).toEqual({ code: "invalid_credentials", message: "Invalid login credentials" });
    expect(await sessionCount(user.id)).toBe(0);
  });

  it("A user seeded by SQL with a pgcrypto hash (and '' token columns) can sign in", async () => {
    const id = randomUUID();
    const address = email();
    await db`
      insert into auth.users (instance_id, id, aud, role, email, encrypted_password, email_confirmed_at,
        confirmation_token, recovery_token, email_change_token_new, email_change,
        raw_app_meta_data, raw_user_meta_data, created_at, updated_at)
      values ('00000000-0000-0000-0000-000000000000', ${id}, 'authenticated', 'authenticated', ${address},
        extensions.crypt('seeded-secret', extensions.gen_salt('bf')), now(), '', '', '', '',
        '{"provider":"email","providers":["email"]}', '{}', now(), now())`;
    const [{ encrypted_password }] = await db`select encrypted_password from auth.users where id = ${id}`;
    expect(encrypted_password).toMatch(/^\$2a\$06\$/);
    const { data, error } = await anon().auth.signInWithPassword({ email: address, password: "seeded-secret" });
    expect(error).toBeNull();
    expect(data.user).toMatchObject({ id, email: address, identities: [] });
  });

  it("A seeded user whose token columns are NULL gets GoTrue's 500 \"Database error querying schema\"", async () => {
    const address = email();
    await db`
      insert into auth.users (instance_id, id, aud, role, email, encrypted_password, email_confirmed_at, raw_app_meta_data, raw_user_meta_data, created_at, updated_at)
      values ('00000000-0000-0000-0000-000000000000', ${randomUUID()}, 'authenticated', 'authenticated', ${address},
        extensions.crypt('seeded-secret', extensions.gen_salt('bf')), now(), '{}', '{}', now(), now())`;
    const response = await authFetch("/token?grant_type=password", { method: "POST", body: JSON.stringify({ email: address, password: "seeded-secret" }) });
    expect(response.status).toBe(500);
    expect(await bodyOf(response)).toEqual({ code: "unexpected_failure", message: "Database error querying schema" });
    await db`delete from auth.users where email = ${address}`;
  });

  it("An unknown grant type answers 400", async () => {
    const response = await authFetch("/token?grant_type=magic", { method: "POST", body: "{}" });
    expect(response.status).toBe(400);
    expect(await bodyOf(response)).toEqual({ code: "invalid_credentials", message: "unsupported_grant_type" });
  });
});

describe("refresh tokens", () => {
  it("A refresh rotates the token: the old one is revoked and becomes the new one's parent", async () => {
    const { supabase, session, id } = await signedUpUser();
    const { data, error } = await supabase.auth.refreshSession({ refresh_token: session.refresh_token });
    expect(error).toBeNull();
    const next = data.session!;
    expect(next.refresh_token).not.toBe(session.refresh_token);
    expect(next.user.id).toBe(id);
    expect(claimsOf(next.access_token).session_id).toBe(claimsOf(session.access_token).session_id);
    const rows = await db`select token, revoked, parent from auth.refresh_tokens where user_id = ${id} order by id`;
    expect(rows).toEqual([
      { token: session.refresh_token, revoked: true, parent: null },
      { token: next.refresh_token, revoked: false, parent: session.refresh_token },
    ]);
    const [sessionRow] = await db`select refreshed_at from auth.sessions where id = ${claimsOf(next.access_token).session_id as string}`;
    expect(sessionRow.refreshed_at).not.toBeNull();
  });

  it("The parent of the live token may be replayed (a lost answer) and yields the live token again", async () => {
    const { supabase, session } = await signedUpUser();
    const first = await supabase.auth.refreshSession({ refresh_token: session.refresh_token });
    const replay = await anon().auth.refreshSession({ refresh_token: session.refresh_token });
    expect(replay.error).toBeNull();
    expect(replay.data.session!.refresh_token).toBe(first.data.session!.refresh_token);
  });

  it("An older revoked token reused outside the reuse interval is refused and revokes the whole session", async () => {
    const { supabase, session, id } = await signedUpUser();
    const second = (await supabase.auth.refreshSession({ refresh_token: session.refresh_token })).data.session!;
    const third = (await supabase.auth.refreshSession({ refresh_token: second.refresh_token })).data.session!;
    // Age the first token's revocation past refresh_token_reuse_interval (10 s) instead of sleeping.
    await db`update auth.refresh_tokens set updated_at = now() - interval '1 minute' where token = ${session.refresh_token}`;
    const { data, error } = await anon().auth.refreshSession({ refresh_token: session.refresh_token });
    expect(data.session).toBeNull();
    expect(error).toMatchObject({ status: 400, code: "refresh_token_already_used", message: "Invalid Refresh Token: Already Used" });
    const live = await db`select token from auth.refresh_tokens where user_id = ${id} and revoked = false`;
    expect(live).toHaveLength(0);
    expect(third.refresh_token).toMatch(/^[a-z2-7]{12}$/);
  });

  it("A revoked token that is not the live token's parent is still honoured within the reuse interval", async () => {
    const { supabase, session } = await signedUpUser();
    const second = (await supabase.auth.refreshSession({ refresh_token: session.refresh_token })).data.session!;
    await supabase.auth.refreshSession({ refresh_token: second.refresh_token });
    const { data, error } = await anon().auth.refreshSession({ refresh_token: session.refresh_token });
    expect(error).toBeNull();
    expect(data.session!.refresh_token).toMatch(/^[a-z2-7]{12}$/);
  });

  it("An unknown refresh token answers 400 refresh_token_not_found", async () => {
    const { error } = await anon().auth.refreshSession({ refresh_token: "unknowntoken" });
    expect(error).toMatchObject({ status: 400, code: "refresh_token_not_found", message: "Invalid Refresh Token: Refresh Token Not Found" });
  });
});

describe("the signed-in user", () => {
  it("getUser answers the user behind the access token", async () => {
    const { supabase, id, email: address } = await signedUpUser({ plan: "pro" });
    const { data, error } = await supabase.auth.getUser();
    expect(error).toBeNull();
    expect(data.user).toMatchObject({ id, email: address, user_metadata: { plan: "pro" } });
  });

  // Issue 28 asked for "This endpoint requires a Bearer token" here. GoTrue answers that only when
  // no Bearer reaches it (auth-js's own suite calls GoTrue directly, without a gateway); supabase-js
  // always sends the project key as the Bearer, Kong passes it on (the CLI's kong.yml translates a
  // publishable key to the anon JWT), and GoTrue's requireAuthentication then refuses the token
  // without `sub` with 403 bad_jwt (internal/api/auth.go, maybeLoadUserOrSession). These pin both
  // answers, in the current and the legacy error shapes, so neither drifts from GoTrue's.
  it("The anon key as the session is GoTrue's 403 bad_jwt on /user and /factors; no Bearer at all is 401 no_authorization", async () => {
    const missingSub = { code: "bad_jwt", message: "invalid claim: missing sub claim" };
    const { data, error } = await anon().auth.getUser(env.anonKey);
    expect(data.user).toBeNull();
    expect(error).toMatchObject({ status: 403, ...missingSub });
    for (const [path, init] of [["/user", {}], ["/user", { method: "PUT", body: JSON.stringify({ data: { a: 1 } }) }], ["/factors", { method: "POST", body: JSON.stringify({ factor_type: "totp" }) }], ["/logout", { method: "POST" }]] as const) {
      const answer = await authFetch(path, init);
      expect({ path, status: answer.status, body: await bodyOf(answer) }).toEqual({ path, status: 403, body: missingSub });
    }
    // The publishable key becomes the anon JWT at the gateway, as Kong does: the same answer.
    const publishable = await authFetch("/user", { key: env.publishableKey });
    expect({ status: publishable.status, body: await bodyOf(publishable) }).toEqual({ status: 403, body: missingSub });
    const legacy = await authFetch("/user", { version: false });
    expect(await bodyOf(legacy)).toEqual({ code: 403, error_code: "bad_jwt", msg: "invalid claim: missing sub claim" });

    const unauthenticated = await fetchFrom(simulatedClientAddress())(`${env.url}/auth/v1/user`, { headers: { "x-supabase-api-version": "2024-01-01" } });
    expect({ status: unauthenticated.status, body: await bodyOf(unauthenticated) })
      .toEqual({ status: 401, body: { code: "no_authorization", message: "This endpoint requires a valid Bearer token" } });
  });

  it("updateUser merges metadata: keys are set, null removes one, the rest stay", async () => {
    const { supabase, id } = await signedUpUser({ plan: "pro", theme: "dark" });
    const { data, error } = await supabase.auth.updateUser({ data: { theme: null, locale: "pt-BR" } });
    expect(error).toBeNull();
    expect(data.user!.user_metadata).toMatchObject({ plan: "pro", locale: "pt-BR" });
    expect(data.user!.user_metadata).not.toHaveProperty("theme");
    const [row] = await db`select raw_user_meta_data from auth.users where id = ${id}`;
    expect(row.raw_user_meta_data).toMatchObject({ plan: "pro", locale: "pt-BR" });
  });

  it("updateUser changes the password: the old one stops working, the new one works, other sessions end", async () => {
    const user = await signedUpUser();
    await anon().auth.signInWithPassword({ email: user.email, password: user.password });
    expect(await sessionCount(user.id)).toBe(2);
    const newPassword = password();
    const { error } = await user.supabase.auth.updateUser({ password: newPassword });
    expect(error).toBeNull();
    expect(await sessionCount(user.id)).toBe(1);
    expect((await anon().auth.signInWithPassword({ email: user.email, password: user.password })).error).toMatchObject({ code: "invalid_credentials" });
    expect((await anon().auth.signInWithPassword({ email: user.email, password: newPassword })).error).toBeNull();
  });

  it("updateUser refuses the current password as the new one (422 same_password)", async () => {
    const user = await signedUpUser();
    const { error } = await user.supabase.auth.updateUser({ password: user.password });
    expect(error).toMatchObject({ status: 422, code: "same_password", message: "New password should be different from the old password." });
  });

  it("An email change waits for the code mailed to the new address, then takes effect", async () => {
    const user = await signedUpUser();
    const newEmail = email();
    const { data, error } = await user.supabase.auth.updateUser({ email: newEmail });
    expect(error).toBeNull();
    expect(data.user).toMatchObject({ email: user.email, new_email: newEmail });
    expect(data.user!.email_change_sent_at).toBeTruthy();

    const [message] = await bodyOf<{ id: string; subject: string }[]>(await fetch(`${env.mailUrl}/api/messages?to=${encodeURIComponent(newEmail)}`));
    expect(message.subject).toBe("Confirm Email Change");
    const { html } = await bodyOf<{ html: string }>(await fetch(`${env.mailUrl}/api/messages/${message.id}`));
    const code = /enter the code: (\d{6})/.exec(html)![1];
    const verified = await anon().auth.verifyOtp({ email: newEmail, token: code, type: "email_change" });
    expect(verified.error).toBeNull();
    expect(verified.data.user).toMatchObject({ id: user.id, email: newEmail });
    expect(verified.data.user).not.toHaveProperty("new_email");
    const [identity] = await db`select identity_data->>'email' as email from auth.identities where user_id = ${user.id}`;
    expect(identity.email).toBe(newEmail);
    expect((await anon().auth.signInWithPassword({ email: newEmail, password: user.password })).error).toBeNull();
  });

  it("The link mailed to the current address also confirms the change, redirecting with a session in the fragment", async () => {
    const user = await signedUpUser();
    const newEmail = email();
    expect((await user.supabase.auth.updateUser({ email: newEmail })).error).toBeNull();
    const [message] = await bodyOf<{ id: string }[]>(await fetch(`${env.mailUrl}/api/messages?to=${encodeURIComponent(user.email)}`));
    const { html } = await bodyOf<{ html: string }>(await fetch(`${env.mailUrl}/api/messages/${message.id}`));
    // Go's html/template escapes "&" in the href, as GoTrue's mail does.
    const link = /href="([^"]+)"/.exec(html)![1].replace(/&amp;/g, "&");
    expect(link.startsWith(`${env.url}/auth/v1/verify?token=`)).toBe(true);
    const response = await fetch(link, { redirect: "manual" });
    expect(response.status).toBe(303);
    const location = new URL(response.headers.get("location")!);
    expect(`${location.origin}/`).toBe("http://127.0.0.1:3000/");
    const fragment = new URLSearchParams(location.hash.slice(1));
    expect(fragment.get("type")).toBe("email_change");
    expect(claimsOf(fragment.get("access_token")!)).toMatchObject({ sub: user.id, email: newEmail });
    const [row] = await db`select email, email_change, email_change_token_new from auth.users where id = ${user.id}`;
    expect(row).toEqual({ email: newEmail, email_change: "", email_change_token_new: "" });
    const again = await fetch(link, { redirect: "manual" });
    expect(new URLSearchParams(new URL(again.headers.get("location")!).hash.slice(1)).get("error_code")).toBe("otp_expired");
  });

  it("signOut answers 204 and ends the session: getUser and the refresh token are refused afterwards", async () => {
    const { supabase, session, id } = await signedUpUser();
    const response = await authFetch("/logout", { method: "POST", bearer: session.access_token });
    expect(response.status).toBe(204);
    expect(await response.text()).toBe("");
    expect(await sessionCount(id)).toBe(0);

    const after = await client(env.anonKey).auth.getUser(session.access_token);
    expect(isAuthSessionMissingError(after.error)).toBe(true);
    const raw = await authFetch("/user", { bearer: session.access_token });
    expect(raw.status).toBe(403);
    expect(await bodyOf(raw)).toEqual({ code: "session_not_found", message: "Session from session_id claim in JWT does not exist" });
    const refresh = await anon().auth.refreshSession({ refresh_token: session.refresh_token });
    expect(refresh.error).toMatchObject({ status: 400, code: "refresh_token_not_found" });
    expect((await supabase.auth.signOut()).error).toBeNull();
  });

  it("signOut scopes: local ends only this session, others every other one", async () => {
    const user = await signedUpUser();
    const second = (await anon().auth.signInWithPassword({ email: user.email, password: user.password })).data.session!;
    const third = (await anon().auth.signInWithPassword({ email: user.email, password: user.password })).data.session!;
    expect(await sessionCount(user.id)).toBe(3);
    expect((await authFetch("/logout?scope=local", { method: "POST", bearer: second.access_token })).status).toBe(204);
    expect(await sessionCount(user.id)).toBe(2);
    expect((await authFetch("/logout?scope=others", { method: "POST", bearer: third.access_token })).status).toBe(204);
    const remaining = await db`select id from auth.sessions where user_id = ${user.id}`;
    expect(remaining.map((row) => row.id)).toEqual([claimsOf(third.access_token).session_id]);
    const bad = await authFetch("/logout?scope=everywhere", { method: "POST", bearer: third.access_token });
    expect(bad.status).toBe(400);
    expect(await bodyOf(bad)).toEqual({ code: "validation_failed", message: 'Unsupported logout scope "everywhere"' });
  });
});

describe("admin API", () => {
  it("The anon key is refused (403 not_admin), a missing bearer is 401 and a forged token 403 bad_jwt", async () => {
    const { data, error } = await client(env.anonKey).auth.admin.listUsers();
    expect(data.users).toEqual([]);
    expect(error).toMatchObject({ status: 403, code: "not_admin", message: "User not allowed" });
    const created = await client(env.anonKey).auth.admin.createUser({ email: email(), password: password() });
    expect(created.error).toMatchObject({ status: 403, code: "not_admin" });

    const missing = await fetchFrom(simulatedClientAddress())(`${env.url}/auth/v1/admin/users`, { headers: { "x-supabase-api-version": "2024-01-01" } });
    expect(missing.status).toBe(401);
    expect(await bodyOf(missing)).toEqual({ code: "no_authorization", message: "This endpoint requires a valid Bearer token" });
    const [header, payload] = env.serviceRoleKey.split(".");
    const forged = await authFetch("/admin/users", { bearer: `${header}.${payload}.${Buffer.from("forged").toString("base64url")}`, key: env.anonKey });
    expect(forged.status).toBe(403);
    expect((await bodyOf(forged)).code).toBe("bad_jwt");
  });

  it("createUser answers 200 with the user, merging app_metadata with the provider list", async () => {
    const address = email();
    const { data, error } = await admin().createUser({
      email: address,
      password: password(),
      email_confirm: true,
      user_metadata: { name: "Bia" },
      app_metadata: { tenant: "acme" },
    });
    expect(error).toBeNull();
    expect(data.user).toMatchObject({
      email: address,
      aud: "authenticated",
      role: "authenticated",
      app_metadata: { provider: "email", providers: ["email"], tenant: "acme" },
      user_metadata: { name: "Bia", email_verified: true },
    });
    expect(data.user!.email_confirmed_at).toBeTruthy();
    expect(data.user!.identities![0].identity_data).toEqual({ sub: data.user!.id, email: address, email_verified: false, phone_verified: false });
    const duplicate = await admin().createUser({ email: address, password: password() });
    expect(duplicate.error).toMatchObject({ status: 422, code: "email_exists", message: "A user with this email address has already been registered" });
    const nobody = await admin().createUser({ password: password() });
    expect(nobody.error).toMatchObject({ status: 400, code: "validation_failed", message: "Cannot create a user without either an email or phone" });
  });

  it("createUser without a password generates one, so the user exists but cannot sign in with a guess", async () => {
    const address = email();
    const { data, error } = await admin().createUser({ email: address });
    expect(error).toBeNull();
    expect(data.user!.email_confirmed_at).toBeUndefined();
    const [row] = await db`select encrypted_password from auth.users where id = ${data.user!.id}`;
    expect(row.encrypted_password).toMatch(/^\$2a\$10\$/);
  });

  it("answers a page or page size past any real one with 400 or an empty page, never 500", async () => {
    const beyond = await authFetch("/admin/users?page=99999999999999999999999&per_page=2", { key: env.serviceRoleKey });
    expect(beyond.status).toBe(400);
    expect(await beyond.json()).toMatchObject({ code: "validation_failed" });
    const far = await authFetch("/admin/users?page=18446744073709551615&per_page=1000", { key: env.serviceRoleKey });
    expect(far.status).toBe(200);
    expect(((await far.json()) as { users: unknown[] }).users).toEqual([]);
  });

  it("listUsers paginates with X-Total-Count and Link headers auth-js understands", async () => {
    for (let index = 0; index < 3; index++) await adminUser();
    const { data, error } = await admin().listUsers({ page: 1, perPage: 2 });
    expect(error).toBeNull();
    expect(data.users).toHaveLength(2);
    expect(data).toMatchObject({ aud: "authenticated", nextPage: 2 });
    expect("total" in data && data.total).toBeGreaterThanOrEqual(3);

    // Other suites create users concurrently, so the expectations follow the count the server reports.
    const raw = await authFetch("/admin/users?page=2&per_page=2", { key: env.serviceRoleKey });
    expect(raw.status).toBe(200);
    const total = Number(raw.headers.get("x-total-count"));
    const last = Math.ceil(total / 2);
    const next = last > 2 ? `</admin/users?page=3&per_page=2>; rel="next", ` : "";
    expect(raw.headers.get("link")).toBe(`${next}</admin/users?page=${last}&per_page=2>; rel="last"`);
    const body = await bodyOf<{ users: { created_at: string }[]; aud: string }>(raw);
    expect(Object.keys(body)).toEqual(["users", "aud"]);
    expect(body.users).toHaveLength(2);
    const newestFirst = body.users.map((user) => user.created_at);
    expect([...newestFirst].sort().reverse()).toEqual(newestFirst);

    const bad = await authFetch("/admin/users?per_page=0", { key: env.serviceRoleKey });
    expect(bad.status).toBe(400);
    expect((await bodyOf(bad)).code).toBe("validation_failed");
  });

  it("updateUserById sets a new password: the old one fails, the new one works, the user's sessions end", async () => {
    const user = await adminUser();
    await anon().auth.signInWithPassword({ email: user.email, password: user.password });
    expect(await sessionCount(user.id)).toBe(1);
    const newPassword = password();
    const { error } = await admin().updateUserById(user.id, { password: newPassword });
    expect(error).toBeNull();
    expect(await sessionCount(user.id)).toBe(0);
    expect((await anon().auth.signInWithPassword({ email: user.email, password: user.password })).error).toMatchObject({ status: 400, code: "invalid_credentials" });
    expect((await anon().auth.signInWithPassword({ email: user.email, password: newPassword })).error).toBeNull();
    const weak = await admin().updateUserById(user.id, { password: "123" });
    expect(weak.error).toMatchObject({ status: 422, code: "weak_password" });
  });

  it("updateUserById merges user_metadata and app_metadata", async () => {
    const user = await adminUser({ user_metadata: { a: 1, b: 2 }, app_metadata: { roles: ["tech"] } });
    const { data, error } = await admin().updateUserById(user.id, { user_metadata: { b: null, c: 3 }, app_metadata: { roles: ["admin"] } });
    expect(error).toBeNull();
    expect(data.user!.user_metadata).toEqual({ a: 1, c: 3, email_verified: true });
    expect(data.user!.app_metadata).toEqual({ provider: "email", providers: ["email"], roles: ["admin"] });
    const session = (await anon().auth.signInWithPassword({ email: user.email, password: user.password })).data.session!;
    expect(claimsOf(session.access_token)).toMatchObject({ app_metadata: { roles: ["admin"] }, user_metadata: { a: 1, c: 3 } });
  });

  it("A banned user cannot sign in (400 user_banned) nor use a token from before the ban, until unbanned", async () => {
    const user = await adminUser();
    const before = (await anon().auth.signInWithPassword({ email: user.email, password: user.password })).data.session!;
    const { data, error } = await admin().updateUserById(user.id, { ban_duration: "24h" });
    expect(error).toBeNull();
    const bannedFor = Date.parse(data.user!.banned_until!) - Date.now();
    expect(bannedFor).toBeGreaterThan(23.9 * 3600_000);
    expect(bannedFor).toBeLessThanOrEqual(24 * 3600_000);

    const signIn = await anon().auth.signInWithPassword({ email: user.email, password: user.password });
    expect(signIn.error).toMatchObject({ status: 400, code: "user_banned", message: "User is banned" });
    const me = await authFetch("/user", { bearer: before.access_token });
    expect(me.status).toBe(403);
    expect((await bodyOf(me)).code).toBe("user_banned");
    const refresh = await anon().auth.refreshSession({ refresh_token: before.refresh_token });
    expect(refresh.error).toMatchObject({ status: 400, code: "user_banned" });

    const badDuration = await admin().updateUserById(user.id, { ban_duration: "1 day" });
    expect(badDuration.error).toMatchObject({ status: 400, code: "validation_failed" });
    expect((await admin().updateUserById(user.id, { ban_duration: "none" })).error).toBeNull();
    expect((await anon().auth.signInWithPassword({ email: user.email, password: user.password })).error).toBeNull();
  });

  it("deleteUser removes the user, its identities and sessions; its token is then refused", async () => {
    const user = await adminUser();
    const session = (await anon().auth.signInWithPassword({ email: user.email, password: user.password })).data.session!;
    const { data, error } = await admin().deleteUser(user.id);
    expect(error).toBeNull();
    expect(data.user).toMatchObject({ id: user.id, email: user.email });
    expect(await db`select 1 from auth.users where id = ${user.id}`).toHaveLength(0);
    expect(await db`select 1 from auth.identities where user_id = ${user.id}`).toHaveLength(0);
    expect(await sessionCount(user.id)).toBe(0);
    const fetched = await admin().getUserById(user.id);
    expect(fetched.error).toMatchObject({ status: 404, code: "user_not_found", message: "User not found" });
    const me = await authFetch("/user", { bearer: session.access_token });
    expect(me.status).toBe(403);
    expect(await bodyOf(me)).toEqual({ code: "user_not_found", message: "User from sub claim in JWT does not exist" });
  });

  it("A soft delete keeps the row with deleted_at set and the email obfuscated", async () => {
    const user = await adminUser();
    const { error } = await admin().deleteUser(user.id, true);
    expect(error).toBeNull();
    const [row] = await db`select email, encrypted_password, deleted_at, raw_user_meta_data from auth.users where id = ${user.id}`;
    expect(row.deleted_at).toBeInstanceOf(Date);
    expect(row.email).not.toBe(user.email);
    expect(row.encrypted_password).toBeNull();
    expect(row.raw_user_meta_data).toEqual({});
    expect((await anon().auth.signInWithPassword({ email: user.email, password: user.password })).error).toMatchObject({ code: "invalid_credentials" });
  });

  it("getUserById answers the user; a malformed id is 404", async () => {
    const user = await adminUser();
    const { data, error } = await admin().getUserById(user.id);
    expect(error).toBeNull();
    expect(data.user).toMatchObject({ id: user.id, email: user.email });
    const malformed = await authFetch("/admin/users/not-a-uuid", { key: env.serviceRoleKey });
    expect(malformed.status).toBe(404);
    expect(await bodyOf(malformed)).toEqual({ code: "validation_failed", message: "user_id must be an UUID" });
  });
});

describe("service endpoints", () => {
  it("health, settings and JWKS answer as GoTrue's do", async () => {
    const health = await authFetch("/health");
    expect(await bodyOf(health)).toMatchObject({ name: "GoTrue" });
    const settings = await bodyOf(await authFetch("/settings"));
    // The test stack turns anonymous sign-ins on (test/fixtures/config.toml).
    expect(settings).toMatchObject({ disable_signup: false, mailer_autoconfirm: true, external: { email: true, anonymous_users: true, phone: true } });
    const jwks = await authFetch("/.well-known/jwks.json");
    const { keys } = await bodyOf<{ keys: Record<string, unknown>[] }>(jwks);
    expect(keys.map((key) => [key.kid, key.alg, key.use, key.key_ops])).toEqual([
      ["local-only-test-key-es256-0001", "ES256", "sig", ["verify"]],
      ["local-only-test-key-rs256-0002", "RS256", "sig", ["verify"]],
    ]);
    expect(keys.some((key) => "d" in key || key.kty === "oct")).toBe(false);
    expect(jwks.headers.get("cache-control")).toBe("public, max-age=600");
  });

  it("getClaims verifies the stack's ES256 access token against the published JWKS", async () => {
    const { supabase, id, session } = await signedUpUser();
    const { data: claims, error } = await supabase.auth.getClaims();
    expect(error).toBeNull();
    expect(claims!.claims.sub).toBe(id);
    expect(claims!.header).toMatchObject({ alg: "ES256", kid: "local-only-test-key-es256-0001", typ: "JWT" });
    const forged = `${session.access_token.slice(0, session.access_token.lastIndexOf(".") + 1)}${"A".repeat(86)}`;
    expect((await supabase.auth.getClaims(forged)).error).toMatchObject({ message: "Invalid JWT signature" });
  });
});
