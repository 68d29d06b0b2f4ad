/**
 * Anonymous sign-in, TOTP multi-factor authentication and phone sign-in with test OTPs, through
 * supabase-js against the running stack (test/fixtures/config.toml turns them on, as a project
 * would in config.toml).
 */
import * as OTPAuth from "otpauth";
import postgres from "postgres";
import { afterAll, describe, expect, it } from "vitest";
import { decodeJwt, deviceClient, freshEmail } from "../helpers/auth.ts";
import { simulatedClientAddress } from "../helpers/clients.ts";
import { env } from "../helpers/env.ts";

const db = postgres(env.dbUrl, { max: 2, onnotice: () => {} });
afterAll(() => db.end());

/** The current code of a TOTP secret, as an authenticator app shows it. */
const totpCode = (secret: string) => new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), algorithm: "SHA1", digits: 6, period: 30 }).generate();

async function signedIn() {
  const email = freshEmail("mfa");
  const password = "pw-Mfa-12345";
  const { data, error } = await deviceClient(env.serviceRoleKey).auth.admin.createUser({ email, password, email_confirm: true });
  if (error) throw error;
  const supabase = deviceClient(env.anonKey, simulatedClientAddress());
  const session = await supabase.auth.signInWithPassword({ email, password });
  if (session.error) throw session.error;
  return { supabase, email, password, id: data.user.id };
}

describe("anonymous sign-in", () => {
  it("signInAnonymously gives an is_anonymous session; adding an e-mail makes the user permanent", async () => {
    const supabase = deviceClient();
    const { data, error } = await supabase.auth.signInAnonymously({ options: { data: { cart: 3 } } });
    expect(error).toBeNull();
    expect(data.user).toMatchObject({ is_anonymous: true, email: "", user_metadata: { cart: 3 } });
    const claims = decodeJwt(data.session!.access_token);
    expect(claims).toMatchObject({ is_anonymous: true, role: "authenticated", aal: "aal1" });
    expect((claims.amr as { method: string }[])[0].method).toBe("anonymous");
    // The data API sees the anonymous user as authenticated, with its own uid.
    const context = await supabase.rpc("test_caller_context", { p_texto: "x", p_numero: 1, p_id: data.user!.id, p_doc: {} });
    expect(context.data).toMatchObject({ uid: data.user!.id, role: "authenticated" });

    const email = freshEmail("linked");
    const linked = await supabase.auth.updateUser({ email });
    expect(linked.error).toBeNull();
    expect(linked.data.user).toMatchObject({ email, is_anonymous: false, app_metadata: { provider: "email", providers: ["email"] } });
    expect(linked.data.user!.email_confirmed_at).toBeTruthy();
    const password = await supabase.auth.updateUser({ password: "pw-Linked-123" });
    expect(password.error).toBeNull();
    expect((await deviceClient().auth.signInWithPassword({ email, password: "pw-Linked-123" })).error).toBeNull();
  });

  it("an anonymous user cannot set a password without an e-mail or phone, nor enroll a factor", async () => {
    const supabase = deviceClient();
    await supabase.auth.signInAnonymously();
    expect((await supabase.auth.updateUser({ password: "pw-Lonely-123" })).error).toMatchObject({ status: 422, code: "validation_failed" });
    expect((await supabase.auth.mfa.enroll({ factorType: "totp" })).error).toMatchObject({ status: 403, code: "no_authorization", message: "Anonymous user not allowed to perform these actions" });
  });
});

describe("multi-factor TOTP", () => {
  it("enroll, challenge and verify raise the session to aal2 with a totp amr; unenroll needs aal2", async () => {
    const { supabase, id } = await signedIn();
    const enrolled = await supabase.auth.mfa.enroll({ factorType: "totp", friendlyName: "phone app", issuer: "Orbita" });
    expect(enrolled.error).toBeNull();
    const factor = enrolled.data!;
    expect(factor).toMatchObject({ type: "totp", friendly_name: "phone app" });
    expect(factor.totp.uri).toMatch(/^otpauth:\/\/totp\/Orbita:.+\?.*secret=[A-Z2-7]{32}/);
    expect(factor.totp.qr_code).toMatch(/^data:image\/svg\+xml;utf-8,<svg/);
    const [stored] = await db`select status::text, factor_type::text, secret from auth.mfa_factors where id = ${factor.id}`;
    expect(stored).toEqual({ status: "unverified", factor_type: "totp", secret: factor.totp.secret });

    expect(await supabase.auth.mfa.getAuthenticatorAssuranceLevel()).toMatchObject({ data: { currentLevel: "aal1", nextLevel: "aal1" } });
    const challenge = await supabase.auth.mfa.challenge({ factorId: factor.id });
    expect(challenge.error).toBeNull();
    expect(challenge.data!.expires_at).toBeGreaterThan(Date.now() / 1000 + 200);
    const wrongCode = totpCode(factor.totp.secret) === "000000" ? "111111" : "000000";
    const wrong = await supabase.auth.mfa.verify({ factorId: factor.id, challengeId: challenge.data!.id, code: wrongCode });
    expect(wrong.error).toMatchObject({ status: 422, code: "mfa_verification_failed", message: "Invalid TOTP code entered" });
    const verified = await supabase.auth.mfa.verify({ factorId: factor.id, challengeId: challenge.data!.id, code: totpCode(factor.totp.secret) });
    expect(verified.error).toBeNull();
    const claims = decodeJwt(verified.data!.access_token);
    expect(claims.aal).toBe("aal2");
    expect((claims.amr as { method: string }[]).map((entry) => entry.method)).toEqual(expect.arrayContaining(["totp", "password"]));
    expect((claims.amr as { method: string }[])[0].method).toBe("totp");
    expect(await supabase.auth.mfa.getAuthenticatorAssuranceLevel()).toMatchObject({ data: { currentLevel: "aal2", nextLevel: "aal2" } });
    const listed = await supabase.auth.mfa.listFactors();
    expect(listed.data!.totp.map((entry) => [entry.id, entry.status])).toEqual([[factor.id, "verified"]]);
    // The used challenge cannot be answered twice.
    expect((await supabase.auth.mfa.verify({ factorId: factor.id, challengeId: challenge.data!.id, code: totpCode(factor.totp.secret) })).error).toMatchObject({ status: 422, code: "mfa_ip_address_mismatch" });
    const [session] = await db`select aal::text, factor_id from auth.sessions where id = ${claims.session_id as string}`;
    expect(session).toEqual({ aal: "aal2", factor_id: factor.id });

    // A fresh password sign-in is aal1 until the second factor is given, and may not change secrets.
    const second = deviceClient();
    const signIn = await second.auth.signInWithPassword({ email: (await db`select email from auth.users where id = ${id}`)[0].email, password: "pw-Mfa-12345" });
    expect(decodeJwt(signIn.data.session!.access_token).aal).toBe("aal1");
    expect(await second.auth.mfa.getAuthenticatorAssuranceLevel()).toMatchObject({ data: { currentLevel: "aal1", nextLevel: "aal2" } });
    expect((await second.auth.updateUser({ password: "pw-Other-999" })).error).toMatchObject({ status: 401, code: "insufficient_aal" });
    expect((await second.auth.mfa.unenroll({ factorId: factor.id })).error).toMatchObject({ status: 422, code: "insufficient_aal" });
    const unenrolled = await supabase.auth.mfa.unenroll({ factorId: factor.id });
    expect(unenrolled.error).toBeNull();
    expect((await db`select count(*)::int as count from auth.mfa_factors where user_id = ${id}`)[0].count).toBe(0);
  });

  it("a second factor of another user is not found; the admin API lists and deletes a user's factors", async () => {
    const owner = await signedIn();
    const stranger = await signedIn();
    const { data } = await owner.supabase.auth.mfa.enroll({ factorType: "totp" });
    const foreign = await stranger.supabase.auth.mfa.challenge({ factorId: data!.id });
    expect(foreign.error).toMatchObject({ status: 404, code: "mfa_factor_not_found", message: "Factor not found" });
    const admin = deviceClient(env.serviceRoleKey).auth.admin;
    const listed = await admin.mfa.listFactors({ userId: owner.id });
    expect(listed.data!.factors.map((factor) => factor.id)).toEqual([data!.id]);
    const deleted = await admin.mfa.deleteFactor({ userId: owner.id, id: data!.id });
    expect(deleted.error).toBeNull();
    expect((await admin.mfa.listFactors({ userId: owner.id })).data!.factors).toEqual([]);
  });
});

describe("phone sign-in with test OTPs", () => {
  it("signInWithOtp to a [auth.sms.test_otp] number and verifyOtp with its fixed code give a session", async () => {
    const supabase = deviceClient();
    const phone = "+1 555 000 1111";
    const { error } = await supabase.auth.signInWithOtp({ phone });
    expect(error).toBeNull();
    const wrong = await supabase.auth.verifyOtp({ phone, token: "999999", type: "sms" });
    expect(wrong.error).toMatchObject({ status: 403, code: "otp_expired", message: "Token has expired or is invalid" });
    const { data, error: verifyError } = await supabase.auth.verifyOtp({ phone, token: "123456", type: "sms" });
    expect(verifyError).toBeNull();
    expect(data.user).toMatchObject({ phone: "15550001111", app_metadata: { provider: "phone" } });
    expect(data.user!.phone_confirmed_at).toBeTruthy();
    expect(decodeJwt(data.session!.access_token)).toMatchObject({ phone: "15550001111" });
    // A second code within [auth.sms] max_frequency is refused.
    expect((await supabase.auth.signInWithOtp({ phone })).error).toMatchObject({ status: 429, code: "over_sms_send_rate_limit" });
  });

  it("signUp with a phone and password signs in at once; other numbers cannot receive a code", async () => {
    const signUp = await deviceClient().auth.signUp({ phone: "15550002222", password: "pw-Phone-123" });
    expect(signUp.error).toBeNull();
    expect(signUp.data.session).not.toBeNull();
    expect((await deviceClient().auth.signInWithPassword({ phone: "15550002222", password: "pw-Phone-123" })).error).toBeNull();
    const elsewhere = await deviceClient().auth.signInWithOtp({ phone: "+44 7700 900123" });
    expect(elsewhere.error).toMatchObject({ status: 422, code: "sms_send_failed" });
  });
});
