/**
 * The PKCE flow of the local auth service (auth-js `flowType: 'pkce'`, the default of
 * @supabase/ssr) against the running stack, as GoTrue runs it: the mailed link's token carries the
 * `pkce_` prefix, following it redirects with `?code=`, and the code is exchanged once, with the
 * verifier, at POST /token?grant_type=pkce. Mails are read from the mail catcher.
 */
import { createClient, type AuthChangeEvent } from "@supabase/supabase-js";
import { createHash, randomBytes } from "node:crypto";
import postgres from "postgres";
import { afterAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { createAuthService } from "../../platform/auth/app.ts";
import { readAuthSettings } from "../../platform/auth/settings.ts";
import { loadConfig } from "../../platform/config/stack-config.ts";
import { fetchFrom, simulatedClientAddress } from "../helpers/clients.ts";
import { decodeJwt, deviceClient, followLink, freshEmail, latestMail, mailCount, pkceClient } from "../helpers/auth.ts";
import { env } from "../helpers/env.ts";

const db = postgres(env.dbUrl, { max: 2, onnotice: () => {} });
afterAll(() => db.end());

const CALLBACK = "http://127.0.0.1:3000/auth/callback";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

async function confirmedUser(password = "pw-Original-123") {
  const email = freshEmail("pkce");
  const { data, error } = await deviceClient(env.serviceRoleKey).auth.admin.createUser({ email, password, email_confirm: true });
  if (error) throw error;
  return { email, password, id: data.user.id };
}

/** Follows a mailed PKCE link and returns the redirect's auth code. */
async function followPkceLink(link: string): Promise<{ code: string; location: URL }> {
  const { status, location } = await followLink(link);
  expect(status).toBe(303);
  // The PKCE flow never puts a session in the URL.
  expect(location.hash).toBe("");
  const code = location.searchParams.get("code") ?? "";
  expect(code).toMatch(UUID);
  return { code, location };
}

/** A raw call to the auth service, as auth-js sends it (2024-01-01 errors: `{code, message}`). */
async function authPost(path: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetchFrom(simulatedClientAddress())(`${env.url}/auth/v1${path}`, {
    method: "POST",
    headers: { apikey: env.anonKey, "content-type": "application/json", "x-supabase-api-version": "2024-01-01" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** A fresh RFC 7636 verifier and its s256 challenge, made independently of the service. */
function verifierPair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

const flowStates = (userId: string) =>
  db<{ auth_code: string; code_challenge: string; code_challenge_method: string; authentication_method: string; provider_type: string; auth_code_issued_at: Date | null }[]>`
    select auth_code, code_challenge, code_challenge_method::text, authentication_method, provider_type, auth_code_issued_at
    from auth.flow_state where user_id = ${userId} order by created_at`;

describe("PKCE through supabase-js", () => {
  it("a magic link redirects with an auth code that exchangeCodeForSession turns into the session, once", async () => {
    const user = await confirmedUser();
    const supabase = pkceClient();
    expect((await supabase.auth.signInWithOtp({ email: user.email, options: { emailRedirectTo: CALLBACK, shouldCreateUser: false } })).error).toBeNull();
    const mail = await latestMail(user.email);
    expect(mail.subject).toBe("Your Magic Link");
    const token = new URL(mail.link).searchParams.get("token") ?? "";
    expect(token).toMatch(/^pkce_[0-9a-f]{56}$/);
    const [stored] = await db`select recovery_token from auth.users where id = ${user.id}`;
    expect(stored.recovery_token).toBe(token);
    const [state] = await flowStates(user.id);
    expect(state).toMatchObject({ code_challenge_method: "s256", authentication_method: "magiclink", provider_type: "magiclink", auth_code_issued_at: null });
    expect(state.code_challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const { code, location } = await followPkceLink(mail.link);
    expect(`${location.origin}${location.pathname}`).toBe(CALLBACK);
    expect(code).toBe(state.auth_code);
    expect((await flowStates(user.id))[0].auth_code_issued_at).toBeInstanceOf(Date);

    const events: AuthChangeEvent[] = [];
    supabase.auth.onAuthStateChange((event) => {
      events.push(event);
    });
    const { data, error } = await supabase.auth.exchangeCodeForSession(code);
    expect(error).toBeNull();
    expect(data.user?.id).toBe(user.id);
    expect(events).toContain("SIGNED_IN");
    const claims = decodeJwt(data.session!.access_token);
    expect(claims).toMatchObject({ sub: user.id, email: user.email, aal: "aal1" });
    expect((claims.amr as { method: string }[])[0].method).toBe("magiclink");
    expect((await supabase.auth.getUser()).data.user?.email).toBe(user.email);

    // The code is used up, and so is the link: following it again redirects with GoTrue's error in the query and the fragment.
    expect(await flowStates(user.id)).toHaveLength(0);
    const reused = await authPost("/token?grant_type=pkce", { auth_code: code, code_verifier: "x".repeat(43) });
    expect(reused).toEqual({ status: 404, body: { code: "flow_state_not_found", message: "invalid flow state, no valid flow state found" } });
    const again = await followLink(mail.link);
    const expected = { error: "access_denied", error_code: "otp_expired", error_description: "Email link is invalid or has expired" };
    expect(Object.fromEntries(again.location.searchParams)).toMatchObject(expected);
    expect(Object.fromEntries(again.fragment)).toEqual({ ...expected, sb: "" });
  });

  it("signUp with confirmations on mails a PKCE confirmation link; its code signs the confirmed user in", async () => {
    // The stack confirms signups at once (config.toml's enable_confirmations = false), so this
    // signup goes to a second auth service on the same database and mail catcher with confirmations
    // on, as `[auth.email] enable_confirmations = true` would run it; the link is followed through the stack.
    const service = createAuthService(loadConfig("test"), { ...readAuthSettings("test"), mailerAutoconfirm: false });
    try {
      const confirming = createClient(env.url, env.anonKey, {
        auth: { flowType: "pkce", persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
        global: {
          fetch: (input, init) => {
            const request = new Request(input, init);
            const url = new URL(request.url);
            return service.fetch(new Request(`http://auth${url.pathname.replace(/^\/auth\/v1/, "")}${url.search}`, request));
          },
        },
        realtime: { transport: WebSocket as never },
      });
      const email = freshEmail("pkce-signup");
      const signedUp = await confirming.auth.signUp({ email, password: "pw-Signup-123", options: { emailRedirectTo: CALLBACK } });
      expect(signedUp.error).toBeNull();
      expect(signedUp.data.session).toBeNull();
      const id = signedUp.data.user!.id;
      expect(await flowStates(id)).toMatchObject([{ authentication_method: "email/signup", provider_type: "email", code_challenge_method: "s256" }]);
      const mail = await latestMail(email);
      expect(mail.subject).toBe("Confirm Your Email");
      expect(new URL(mail.link).searchParams.get("token")).toMatch(/^pkce_[0-9a-f]{56}$/);

      const { code } = await followPkceLink(mail.link);
      const { data, error } = await confirming.auth.exchangeCodeForSession(code);
      expect(error).toBeNull();
      expect(data.user).toMatchObject({ id, email });
      expect(data.user!.email_confirmed_at).toBeTruthy();
      expect((decodeJwt(data.session!.access_token).amr as { method: string }[])[0].method).toBe("email/signup");
    } finally {
      await service.close();
    }
  });

  it("a signup confirmation (resend) redirects with a code whose session belongs to the now confirmed user", async () => {
    const email = freshEmail("pkce-signup");
    const created = await deviceClient(env.serviceRoleKey).auth.admin.createUser({ email, password: "pw-Signup-123" });
    expect(created.error).toBeNull();
    const id = created.data.user!.id;
    const supabase = pkceClient();
    expect((await supabase.auth.resend({ type: "signup", email, options: { emailRedirectTo: CALLBACK } })).error).toBeNull();
    const mail = await latestMail(email);
    expect(mail.subject).toBe("Confirm Your Email");
    expect(mail.link).toContain("type=signup");
    expect(new URL(mail.link).searchParams.get("token")).toMatch(/^pkce_/);
    expect(await flowStates(id)).toMatchObject([{ authentication_method: "email/signup", provider_type: "email/signup" }]);

    const { code } = await followPkceLink(mail.link);
    const [row] = await db`select email_confirmed_at from auth.users where id = ${id}`;
    expect(row.email_confirmed_at).toBeInstanceOf(Date);
    const { data, error } = await supabase.auth.exchangeCodeForSession(code);
    expect(error).toBeNull();
    expect(data.user).toMatchObject({ id, email });
    expect(data.user!.email_confirmed_at).toBeTruthy();
    expect((decodeJwt(data.session!.access_token).amr as { method: string }[])[0].method).toBe("email/signup");
    expect((await deviceClient().auth.signInWithPassword({ email, password: "pw-Signup-123" })).error).toBeNull();
  });

  it("password recovery: the code's session raises PASSWORD_RECOVERY and may set a new password", async () => {
    const user = await confirmedUser();
    const supabase = pkceClient();
    expect(await supabase.auth.resetPasswordForEmail(user.email, { redirectTo: CALLBACK })).toEqual({ data: {}, error: null });
    const mail = await latestMail(user.email);
    expect(mail.subject).toBe("Reset Your Password");
    expect(await flowStates(user.id)).toMatchObject([{ authentication_method: "recovery", provider_type: "recovery" }]);
    const { code } = await followPkceLink(mail.link);

    const events: AuthChangeEvent[] = [];
    supabase.auth.onAuthStateChange((event) => {
      events.push(event);
    });
    const { data, error } = await supabase.auth.exchangeCodeForSession(code);
    expect(error).toBeNull();
    expect(events).toContain("PASSWORD_RECOVERY");
    expect((decodeJwt(data.session!.access_token).amr as { method: string }[])[0].method).toBe("recovery");
    expect((await supabase.auth.updateUser({ password: "pw-Recovered-456" })).error).toBeNull();
    expect((await deviceClient().auth.signInWithPassword({ email: user.email, password: user.password })).error).toMatchObject({ code: "invalid_credentials" });
    expect((await deviceClient().auth.signInWithPassword({ email: user.email, password: "pw-Recovered-456" })).error).toBeNull();
  });

  it("a magic link for a new address signs the user up and completes the PKCE flow", async () => {
    const email = freshEmail("pkce-new");
    const supabase = pkceClient();
    expect((await supabase.auth.signInWithOtp({ email, options: { emailRedirectTo: CALLBACK, data: { plan: "trial" } } })).error).toBeNull();
    const { code } = await followPkceLink((await latestMail(email)).link);
    const { data, error } = await supabase.auth.exchangeCodeForSession(code);
    expect(error).toBeNull();
    expect(data.user).toMatchObject({ email, user_metadata: { plan: "trial" } });
  });

  it("an e-mail change from updateUser completes through a code whose session carries the new address", async () => {
    const user = await confirmedUser();
    const supabase = pkceClient();
    expect((await supabase.auth.signInWithPassword({ email: user.email, password: user.password })).error).toBeNull();
    const target = freshEmail("pkce-moved");
    expect((await supabase.auth.updateUser({ email: target }, { emailRedirectTo: CALLBACK })).error).toBeNull();
    expect(await flowStates(user.id)).toMatchObject([{ authentication_method: "email_change", provider_type: "email_change" }]);
    const mail = await latestMail(target);
    expect(new URL(mail.link).searchParams.get("token")).toMatch(/^pkce_/);
    const { code } = await followPkceLink(mail.link);
    const { data, error } = await supabase.auth.exchangeCodeForSession(code);
    expect(error).toBeNull();
    expect(data.user?.email).toBe(target);
    expect((decodeJwt(data.session!.access_token).amr as { method: string }[])[0].method).toBe("email_change");
  });

  it("the mailed code and the prefixed token hash still sign in directly through verifyOtp, as in GoTrue", async () => {
    const user = await confirmedUser();
    const supabase = pkceClient();
    await supabase.auth.resetPasswordForEmail(user.email, { redirectTo: CALLBACK });
    const mail = await latestMail(user.email);
    const byHash = await deviceClient().auth.verifyOtp({ token_hash: new URL(mail.link).searchParams.get("token")!, type: "recovery" });
    expect(byHash.error).toBeNull();
    expect(byHash.data.user?.id).toBe(user.id);

    const other = await confirmedUser();
    await pkceClient().auth.signInWithOtp({ email: other.email, options: { emailRedirectTo: CALLBACK } });
    const byCode = await deviceClient().auth.verifyOtp({ email: other.email, token: (await latestMail(other.email)).code!, type: "email" });
    expect(byCode.error).toBeNull();
    expect(byCode.data.user?.id).toBe(other.id);
  });
});

describe("PKCE grant errors", () => {
  it("a wrong verifier is 400 bad_code_verifier and leaves the code usable; an expired flow state is 422 flow_state_expired", async () => {
    const user = await confirmedUser();
    const { verifier, challenge } = verifierPair();
    // The method is case-insensitive, as GoTrue parses it; it is stored lower-cased.
    expect(await authPost(`/otp?redirect_to=${encodeURIComponent(CALLBACK)}`, { email: user.email, create_user: false, code_challenge: challenge, code_challenge_method: "S256" })).toEqual({ status: 200, body: {} });
    expect(await flowStates(user.id)).toMatchObject([{ code_challenge: challenge, code_challenge_method: "s256" }]);
    const { code } = await followPkceLink((await latestMail(user.email)).link);

    const wrong = verifierPair().verifier;
    expect(await authPost("/token?grant_type=pkce", { auth_code: code, code_verifier: wrong })).toEqual({
      status: 400,
      body: { code: "bad_code_verifier", message: "code challenge does not match previously saved code verifier" },
    });
    expect(await authPost("/token?grant_type=pkce", { auth_code: code, code_verifier: challenge })).toMatchObject({ status: 400, body: { code: "bad_code_verifier" } });

    // A magic link's code lives 300 s from when the link handed it out.
    await db`update auth.flow_state set auth_code_issued_at = now() - interval '301 seconds' where auth_code = ${code}`;
    expect(await authPost("/token?grant_type=pkce", { auth_code: code, code_verifier: verifier })).toEqual({
      status: 422,
      body: { code: "flow_state_expired", message: "invalid flow state, flow state has expired" },
    });
    await db`update auth.flow_state set auth_code_issued_at = now() where auth_code = ${code}`;

    const exchanged = await authPost("/token?grant_type=pkce", { auth_code: code, code_verifier: verifier });
    expect(exchanged.status).toBe(200);
    expect(exchanged.body).toMatchObject({ token_type: "bearer", user: { id: user.id } });
    expect(await authPost("/token?grant_type=pkce", { auth_code: code, code_verifier: verifier })).toMatchObject({ status: 404, body: { code: "flow_state_not_found" } });
  });

  it("other flows expire 300 s after the flow state was created, even when the link was followed in time", async () => {
    const user = await confirmedUser();
    const { verifier } = verifierPair();
    // The plain method: the challenge is the verifier itself.
    expect((await authPost(`/recover?redirect_to=${encodeURIComponent(CALLBACK)}`, { email: user.email, code_challenge: verifier, code_challenge_method: "plain" })).status).toBe(200);
    const { code } = await followPkceLink((await latestMail(user.email)).link);
    await db`update auth.flow_state set created_at = now() - interval '301 seconds' where auth_code = ${code}`;
    expect(await authPost("/token?grant_type=pkce", { auth_code: code, code_verifier: verifier })).toMatchObject({ status: 422, body: { code: "flow_state_expired" } });
    await db`update auth.flow_state set created_at = now() where auth_code = ${code}`;
    expect((await authPost("/token?grant_type=pkce", { auth_code: code, code_verifier: verifier })).status).toBe(200);
  });

  it("a missing or empty auth code or verifier is 400 validation_failed; an unknown code is 404 flow_state_not_found", async () => {
    const message = "invalid request: both auth code and code verifier should be non-empty";
    for (const body of [{}, { auth_code: "1b7a0f62-3d55-4c2b-9a59-4c2f5a0c3f11" }, { code_verifier: "x".repeat(43) }, { auth_code: "", code_verifier: "x".repeat(43) }, { auth_code: null, code_verifier: null }]) {
      expect(await authPost("/token?grant_type=pkce", body)).toEqual({ status: 400, body: { code: "validation_failed", message } });
    }
    expect(await authPost("/token?grant_type=pkce", { auth_code: "1b7a0f62-3d55-4c2b-9a59-4c2f5a0c3f11", code_verifier: "x".repeat(43) })).toEqual({
      status: 404,
      body: { code: "flow_state_not_found", message: "invalid flow state, no valid flow state found" },
    });
  });

  it("bad PKCE parameters are refused with GoTrue's 400 validation_failed, before anything is sent or stored", async () => {
    const user = await confirmedUser();
    const { challenge } = verifierPair();
    const cases: [string, Record<string, unknown>, string][] = [
      ["/otp", { email: user.email, code_challenge: challenge }, "PKCE flow requires code_challenge_method and code_challenge"],
      ["/recover", { email: user.email, code_challenge_method: "s256" }, "PKCE flow requires code_challenge_method and code_challenge"],
      ["/magiclink", { email: user.email, code_challenge: "too-short", code_challenge_method: "s256" }, "code challenge has to be between 43 and 128 characters"],
      ["/resend", { type: "signup", email: user.email, code_challenge: `${challenge.slice(1)}+`, code_challenge_method: "s256" }, "code challenge can only contain alphanumeric characters, hyphens, periods, underscores and tildes"],
      ["/signup", { email: freshEmail("pkce-bad"), password: "pw-Bad-12345", code_challenge: challenge, code_challenge_method: "" }, "PKCE flow requires code_challenge_method and code_challenge"],
      ["/recover", { email: user.email, code_challenge: challenge, code_challenge_method: "sha1" }, 'unsupported code_challenge method "sha1"'],
    ];
    for (const [path, body, message] of cases) {
      expect([path, await authPost(path, body)]).toEqual([path, { status: 400, body: { code: "validation_failed", message } }]);
    }
    expect(await mailCount(user.email)).toBe(0);
    expect(await flowStates(user.id)).toHaveLength(0);
    // A pkce_ token names its authentication method by the link's type; "email" names none.
    const link = await fetchFrom(simulatedClientAddress())(`${env.url}/auth/v1/verify?token=pkce_${"0".repeat(56)}&type=email`, {
      headers: { apikey: env.anonKey, "x-supabase-api-version": "2024-01-01" },
      redirect: "manual",
    });
    expect(link.status).toBe(400);
    expect(await link.json()).toEqual({ code: "validation_failed", message: 'unsupported authentication method "email"' });
    const [row] = await db`select recovery_token, recovery_sent_at from auth.users where id = ${user.id}`;
    expect(row).toEqual({ recovery_token: "", recovery_sent_at: null });
  });
});
