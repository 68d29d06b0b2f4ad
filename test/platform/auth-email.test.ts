/**
 * The e-mail flows of the local auth service through supabase-js against the running stack, as
 * GoTrue runs them with Mailpit under `supabase start`: every mail is read from the mail catcher
 * and its link followed or its code entered.
 */
import { AuthApiError } from "@supabase/supabase-js";
import postgres from "postgres";
import { afterAll, describe, expect, it } from "vitest";
import { fetchFrom, simulatedClientAddress } from "../helpers/clients.ts";
import { decodeJwt, deviceClient, followLink, freshEmail, latestMail, mailCount } from "../helpers/auth.ts";
import { env } from "../helpers/env.ts";

const db = postgres(env.dbUrl, { max: 2, onnotice: () => {} });
afterAll(() => db.end());

const admin = () => deviceClient(env.serviceRoleKey).auth.admin;

async function confirmedUser(password = "pw-Original-123") {
  const email = freshEmail();
  const { data, error } = await admin().createUser({ email, password, email_confirm: true });
  if (error) throw error;
  return { email, password, id: data.user.id };
}

describe("one-time codes and magic links", () => {
  it("signInWithOtp signs a new user up and mails a magic link whose redirect carries a session", async () => {
    const email = freshEmail("otp");
    const supabase = deviceClient();
    const { data, error } = await supabase.auth.signInWithOtp({ email, options: { data: { plan: "trial" } } });
    expect(error).toBeNull();
    expect(data).toEqual({ user: null, session: null });
    const mail = await latestMail(email);
    expect(mail.subject).toBe("Your Magic Link");
    expect(mail.code).toMatch(/^\d{6}$/);
    expect(mail.link).toMatch(new RegExp(`^${env.url}/auth/v1/verify\\?token=[0-9a-f]{56}&type=magiclink&redirect_to=http://127.0.0.1:3000$`));
    const [stored] = await db`select t.token_type::text, t.token_hash, u.recovery_token from auth.one_time_tokens t join auth.users u on u.id = t.user_id where u.email = ${email}`;
    expect(stored.token_type).toBe("recovery_token");
    expect(stored.token_hash).toBe(new URL(mail.link).searchParams.get("token"));
    expect(stored.recovery_token).toBe(stored.token_hash);

    const { status, location, fragment } = await followLink(mail.link);
    expect(status).toBe(303);
    expect(location.origin).toBe("http://127.0.0.1:3000");
    expect(fragment.get("type")).toBe("magiclink");
    expect(fragment.has("sb")).toBe(true);
    const claims = decodeJwt(fragment.get("access_token")!);
    expect(claims).toMatchObject({ email, aal: "aal1", user_metadata: { plan: "trial" } });
    expect((claims.amr as { method: string }[])[0].method).toBe("otp");
    const session = await deviceClient().auth.setSession({ access_token: fragment.get("access_token")!, refresh_token: fragment.get("refresh_token")! });
    expect(session.error).toBeNull();
    expect(session.data.user?.email).toBe(email);

    // The link is single-use: the redirect now carries GoTrue's error instead.
    const reused = await followLink(mail.link);
    expect(Object.fromEntries(reused.fragment)).toEqual({ error: "access_denied", error_code: "otp_expired", error_description: "Email link is invalid or has expired", sb: "" });
  });

  it("the mailed code signs in through verifyOtp; a wrong, reused or expired code is 403 otp_expired", async () => {
    const { email, id } = await confirmedUser();
    const supabase = deviceClient();
    expect((await supabase.auth.signInWithOtp({ email, options: { shouldCreateUser: false } })).error).toBeNull();
    const { code } = await latestMail(email);
    const wrong = await supabase.auth.verifyOtp({ email, token: code === "000000" ? "111111" : "000000", type: "email" });
    expect(wrong.error).toBeInstanceOf(AuthApiError);
    expect(wrong.error).toMatchObject({ status: 403, code: "otp_expired", message: "Token has expired or is invalid" });
    const { data, error } = await supabase.auth.verifyOtp({ email, token: code!, type: "email" });
    expect(error).toBeNull();
    expect(data.session?.user.id).toBe(id);
    expect((await supabase.auth.verifyOtp({ email, token: code!, type: "email" })).error).toMatchObject({ status: 403, code: "otp_expired" });
    const [{ count }] = await db<{ count: number }[]>`select count(*)::int as count from auth.one_time_tokens where user_id = ${id}`;
    expect(count).toBe(0);

    // Expiry: a code sent longer ago than [auth.email] otp_expiry is refused.
    await db`update auth.users set recovery_sent_at = now() - interval '2 minutes' where id = ${id}`;
    expect((await supabase.auth.signInWithOtp({ email })).error).toBeNull();
    const fresh = await latestMail(email, 2);
    await db`update auth.users set recovery_sent_at = now() - interval '3601 seconds' where id = ${id}`;
    expect((await supabase.auth.verifyOtp({ email, token: fresh.code!, type: "magiclink" })).error).toMatchObject({ status: 403, code: "otp_expired" });
  });

  it("shouldCreateUser false refuses an unknown address (422 otp_disabled) and sends nothing", async () => {
    const email = freshEmail("nobody");
    const { error } = await deviceClient().auth.signInWithOtp({ email, options: { shouldCreateUser: false } });
    expect(error).toMatchObject({ status: 422, code: "otp_disabled", message: "Signups not allowed for otp" });
    expect(await mailCount(email)).toBe(0);
  });

  it("a second mail within max_frequency is 429 over_email_send_rate_limit", async () => {
    const { email } = await confirmedUser();
    const supabase = deviceClient();
    expect((await supabase.auth.signInWithOtp({ email })).error).toBeNull();
    const again = await supabase.auth.signInWithOtp({ email });
    expect(again.error).toMatchObject({ status: 429, code: "over_email_send_rate_limit" });
    expect(again.error!.message).toMatch(/^For security purposes, you can only request this after \d+ seconds\.$/);
    expect(await mailCount(email)).toBe(1);
  });

  it("redirect_to is honoured only when site_url or additional_redirect_urls allow it", async () => {
    const allowed = await confirmedUser();
    expect((await deviceClient().auth.signInWithOtp({ email: allowed.email, options: { emailRedirectTo: "https://app.orbita.test/welcome" } })).error).toBeNull();
    const { location } = await followLink((await latestMail(allowed.email)).link);
    expect(`${location.origin}${location.pathname}`).toBe("https://app.orbita.test/welcome");
    const refused = await confirmedUser();
    expect((await deviceClient().auth.signInWithOtp({ email: refused.email, options: { emailRedirectTo: "https://evil.example.com/steal" } })).error).toBeNull();
    const mail = await latestMail(refused.email);
    expect(mail.link.endsWith("redirect_to=http://127.0.0.1:3000")).toBe(true);
  });

  it("more than sign_in_sign_ups requests from one address in 5 minutes is 429 over_request_rate_limit", async () => {
    const device = fetchFrom(simulatedClientAddress());
    const request = () =>
      device(`${env.url}/auth/v1/recover`, {
        method: "POST",
        headers: { apikey: env.anonKey, "content-type": "application/json", "x-supabase-api-version": "2024-01-01" },
        body: JSON.stringify({ email: freshEmail("nobody") }),
      });
    const statuses: number[] = [];
    for (let index = 0; index < 30; index++) statuses.push((await request()).status);
    expect(statuses.every((status) => status === 200)).toBe(true);
    const refused = await request();
    expect(refused.status).toBe(429);
    expect(await refused.json()).toEqual({ code: "over_request_rate_limit", message: "Request rate limit reached" });
  });
});

describe("password recovery", () => {
  it("resetPasswordForEmail mails a recovery link; its session sets a new password", async () => {
    const user = await confirmedUser();
    const supabase = deviceClient();
    expect(await supabase.auth.resetPasswordForEmail(user.email, { redirectTo: "http://127.0.0.1:3000/reset" })).toEqual({ data: {}, error: null });
    const mail = await latestMail(user.email);
    expect(mail.subject).toBe("Reset Your Password");
    expect(mail.link).toContain("type=recovery");
    const { location, fragment } = await followLink(mail.link);
    expect(location.pathname).toBe("/reset");
    expect(fragment.get("type")).toBe("recovery");
    const signedIn = deviceClient();
    expect((await signedIn.auth.setSession({ access_token: fragment.get("access_token")!, refresh_token: fragment.get("refresh_token")! })).error).toBeNull();
    expect((await signedIn.auth.updateUser({ password: "pw-Recovered-456" })).error).toBeNull();
    expect((await deviceClient().auth.signInWithPassword({ email: user.email, password: user.password })).error).toMatchObject({ code: "invalid_credentials" });
    expect((await deviceClient().auth.signInWithPassword({ email: user.email, password: "pw-Recovered-456" })).error).toBeNull();
  });

  it("an unknown address answers the same empty 200 and no mail goes out", async () => {
    const email = freshEmail("unknown");
    expect(await deviceClient().auth.resetPasswordForEmail(email)).toEqual({ data: {}, error: null });
    expect(await mailCount(email)).toBe(0);
  });

  it("the recovery code works through verifyOtp; a tampered token_hash is refused", async () => {
    const user = await confirmedUser();
    await deviceClient().auth.resetPasswordForEmail(user.email);
    const mail = await latestMail(user.email);
    const hash = new URL(mail.link).searchParams.get("token")!;
    const tampered = await deviceClient().auth.verifyOtp({ token_hash: `${hash.slice(0, -1)}${hash.endsWith("0") ? "1" : "0"}`, type: "recovery" });
    expect(tampered.error).toMatchObject({ status: 403, code: "otp_expired", message: "Email link is invalid or has expired" });
    const verified = await deviceClient().auth.verifyOtp({ email: user.email, token: mail.code!, type: "recovery" });
    expect(verified.error).toBeNull();
    expect(verified.data.user?.id).toBe(user.id);
  });
});

describe("invitations and admin links", () => {
  it("inviteUserByEmail mails an invitation; accepting it signs the new user in, confirmed", async () => {
    const email = freshEmail("invited");
    const { data, error } = await admin().inviteUserByEmail(email, { data: { role_hint: "manager" } });
    expect(error).toBeNull();
    expect(data.user).toMatchObject({ email, user_metadata: { role_hint: "manager" } });
    expect(data.user!.invited_at).toBeTruthy();
    expect(data.user!.email_confirmed_at).toBeUndefined();
    const mail = await latestMail(email);
    expect(mail.subject).toBe("You have been invited");
    expect(mail.html).toContain("You have been invited to create a user on http://127.0.0.1:3000");
    const { fragment } = await followLink(mail.link);
    expect(fragment.get("type")).toBe("invite");
    expect(decodeJwt(fragment.get("access_token")!)).toMatchObject({ sub: data.user!.id, email });
    const [row] = await db`select email_confirmed_at, encrypted_password from auth.users where id = ${data.user!.id}`;
    expect(row.email_confirmed_at).toBeInstanceOf(Date);
    expect(row.encrypted_password).toMatch(/^\$2a\$10\$/);
    expect((await admin().inviteUserByEmail(email)).error).toMatchObject({ status: 422, code: "email_exists" });
  });

  it("generateLink prepares signup, magiclink, recovery, invite and email change links without sending mail", async () => {
    const newcomer = freshEmail("generated");
    const signup = await admin().generateLink({ type: "signup", email: newcomer, password: "pw-Generated-1" });
    expect(signup.error).toBeNull();
    expect(signup.data.properties!).toMatchObject({ verification_type: "signup", redirect_to: "http://127.0.0.1:3000", email_otp: expect.stringMatching(/^\d{6}$/) });
    expect(signup.data.user!.email_confirmed_at).toBeUndefined();
    expect(await mailCount(newcomer)).toBe(0);
    const confirmed = await deviceClient().auth.verifyOtp({ token_hash: signup.data.properties!.hashed_token, type: "signup" });
    expect(confirmed.error).toBeNull();
    expect(confirmed.data.user?.email_confirmed_at).toBeTruthy();

    const existing = await confirmedUser();
    const magic = await admin().generateLink({ type: "magiclink", email: existing.email });
    expect((await followLink(magic.data.properties!.action_link)).fragment.get("type")).toBe("magiclink");
    const recovery = await admin().generateLink({ type: "recovery", email: existing.email, options: { redirectTo: "https://app.orbita.test/reset" } });
    expect(recovery.data.properties!.redirect_to).toBe("https://app.orbita.test/reset");
    expect((await deviceClient().auth.verifyOtp({ email: existing.email, token: recovery.data.properties!.email_otp, type: "recovery" })).error).toBeNull();

    const target = freshEmail("moved");
    const change = await admin().generateLink({ type: "email_change_new", email: existing.email, newEmail: target });
    expect(change.data.user!.new_email).toBe(target);
    const moved = await followLink(change.data.properties!.action_link);
    expect(decodeJwt(moved.fragment.get("access_token")!).email).toBe(target);

    expect((await admin().generateLink({ type: "recovery", email: freshEmail("ghost") })).error).toMatchObject({ status: 404, code: "user_not_found", message: "User with this email not found" });
    expect((await admin().generateLink({ type: "invite", email: target })).error).toMatchObject({ status: 422, code: "email_exists" });
    const anonymous = await deviceClient().auth.admin.generateLink({ type: "magiclink", email: target });
    expect(anonymous.error).toMatchObject({ status: 403, code: "not_admin" });
  });
});

describe("reauthentication", () => {
  it("a password change from a day-old session needs the mailed nonce (secure_password_change)", async () => {
    const user = await confirmedUser();
    const supabase = deviceClient();
    const { data } = await supabase.auth.signInWithPassword({ email: user.email, password: user.password });
    await db`update auth.sessions set created_at = now() - interval '25 hours' where id = ${decodeJwt(data.session!.access_token).session_id as string}`;
    const refused = await supabase.auth.updateUser({ password: "pw-Changed-789" });
    expect(refused.error).toMatchObject({ status: 400, code: "reauthentication_needed", message: "Password update requires reauthentication" });
    expect((await supabase.auth.reauthenticate()).error).toBeNull();
    const mail = await latestMail(user.email);
    expect(mail.subject).toBe("Confirm reauthentication");
    const nonce = /Enter the code: (\d+)/.exec(mail.html)![1];
    const wrong = await supabase.auth.updateUser({ password: "pw-Changed-789", nonce: nonce === "000000" ? "111111" : "000000" });
    expect(wrong.error).toMatchObject({ status: 422, code: "reauthentication_not_valid", message: "Nonce has expired or is invalid" });
    expect((await supabase.auth.updateUser({ password: "pw-Changed-789", nonce })).error).toBeNull();
    expect((await deviceClient().auth.signInWithPassword({ email: user.email, password: "pw-Changed-789" })).error).toBeNull();
    expect((await supabase.auth.updateUser({ password: "pw-Changed-000", nonce })).error).toMatchObject({ code: "reauthentication_not_valid" });
  });
});
