import { Hono } from "hono";
import * as OTPAuth from "otpauth";
import QRCode from "qrcode";
import { recordAudit } from "./audit-log.ts";
import { isUuid, requireAdmin, requireUser, type UserCaller } from "./authenticate.ts";
import { clientInfo, type AuthContext } from "./context.ts";
import { badRequest, forbidden, internalError, notFound, unprocessable } from "./errors.ts";
import {
  deleteAal1Sessions,
  deleteChallenge,
  deleteExpiredFactors,
  deleteFactor,
  deleteUnverifiedFactors,
  downgradeSessions,
  findChallenge,
  findOwnedFactor,
  insertChallenge,
  insertTotpFactor,
  markChallengeVerified,
  markFactorVerified,
} from "./factors-repository.ts";
import { readBody } from "./request-body.ts";
import { challengeFactorBody, enrollFactorBody, verifyFactorBody } from "./schemas.ts";
import { upgradeSession } from "./tokens.ts";
import { factorJson } from "./user-json.ts";
import { findUserById, type FactorRow, type UserRecord } from "./users-repository.ts";

/** GoTrue's defaults, which config.toml does not expose: challenges last 5 minutes, unchallenged unverified factors too. */
const CHALLENGE_EXPIRY_SECONDS = 300;
const FACTOR_EXPIRY_SECONDS = 300;
/** GoTrue's MaxVerifiedFactors. */
const MAX_VERIFIED_FACTORS = 10;

/** The TOTP parameters GoTrue (pquerna/otp) uses: SHA-1, 6 digits, 30-second steps, one step of skew. */
function totp(secret: string, issuer = "", label = ""): OTPAuth.TOTP {
  return new OTPAuth.TOTP({ issuer, label, algorithm: "SHA1", digits: 6, period: 30, secret: OTPAuth.Secret.fromBase32(secret) });
}

/** A signed-in, non-anonymous caller with a session, as /factors requires. */
async function requireFactorCaller(request: Request, context: AuthContext): Promise<UserCaller & { session: NonNullable<UserCaller["session"]> }> {
  const caller = await requireUser(request, context);
  if (caller.claims.is_anonymous === true) throw forbidden("no_authorization", "Anonymous user not allowed to perform these actions");
  if (!caller.session) throw internalError("A valid session and a registered user are required to enroll a factor");
  return { ...caller, session: caller.session };
}

/** GoTrue's loadFactor: the factor named in the path, which must belong to the user. */
async function loadFactor(context: AuthContext, record: UserRecord, factorId: string): Promise<FactorRow> {
  if (!isUuid(factorId)) throw notFound("validation_failed", "factor_id must be an UUID");
  const factor = await findOwnedFactor(context.db, record.user.id, factorId);
  if (!factor) throw notFound("mfa_factor_not_found", "Factor not found");
  return factor;
}

/**
 * POST /factors (auth-js mfa.enroll): a new unverified TOTP factor with its secret, otpauth URI
 * and QR code (SVG). Names must be unique per user; a user with a verified factor enrolls another
 * only from an aal2 session.
 */
async function enroll(context: AuthContext, request: Request): Promise<Response> {
  const { settings } = context;
  const caller = await requireFactorCaller(request, context);
  const body = await readBody(request, enrollFactorBody);
  const type = body.factor_type ?? "";
  if (type === "phone") throw unprocessable("mfa_phone_enroll_not_enabled", "MFA enroll is disabled for Phone");
  if (type === "webauthn") throw unprocessable("mfa_webauthn_enroll_not_enabled", "MFA enroll is disabled for WebAuthn");
  if (type !== "totp") throw badRequest("validation_failed", "factor_type needs to be totp, phone, or webauthn");
  if (!settings.totpEnrollEnabled) throw unprocessable("mfa_totp_enroll_not_enabled", "MFA enroll is disabled for TOTP");
  const friendlyName = body.friendly_name ?? "";
  const issuer = body.issuer || new URL(settings.siteUrl).host;

  await deleteExpiredFactors(context.db, FACTOR_EXPIRY_SECONDS);
  const record = (await findUserById(context.db, caller.record.user.id)) ?? caller.record;
  const verified = record.factors.filter((factor) => factor.status === "verified").length;
  if (record.factors.some((factor) => (factor.friendly_name ?? "") === friendlyName)) {
    throw unprocessable("mfa_factor_name_conflict", `A factor with the friendly name "${friendlyName}" for this user already exists`);
  }
  if (record.factors.length >= settings.maxEnrolledFactors || verified >= MAX_VERIFIED_FACTORS) {
    throw unprocessable("too_many_enrolled_mfa_factors", "Maximum number of verified factors reached, unenroll to continue");
  }
  if (verified > 0 && caller.session.aal !== "aal2") throw forbidden("insufficient_aal", "AAL2 required to enroll a new factor");

  const secret = new OTPAuth.Secret({ size: 20 }).base32;
  const uri = totp(secret, issuer, record.user.email ?? "").toString();
  const factor = await context.db.begin(async (tx) => {
    const created = await insertTotpFactor(tx, record.user.id, friendlyName, secret);
    await recordAudit(tx, record.user, "factor_in_progress", clientInfo(request).ip, { factor_id: created.id });
    return created;
  });
  const qrCode = await QRCode.toString(uri, { type: "svg", errorCorrectionLevel: "H" });
  return Response.json({ id: factor.id, type: "totp", friendly_name: factor.friendly_name ?? "", totp: { qr_code: qrCode, secret, uri } });
}

/** POST /factors/{id}/challenge (auth-js mfa.challenge): a challenge to answer within 5 minutes, from the same address. */
async function challenge(context: AuthContext, request: Request, factorId: string): Promise<Response> {
  const client = clientInfo(request);
  context.limits.take("factor_challenge", client.ip);
  const caller = await requireFactorCaller(request, context);
  const factor = await loadFactor(context, caller.record, factorId);
  await readBody(request, challengeFactorBody, true);
  if (factor.factor_type !== "totp") throw unprocessable("mfa_phone_verify_not_enabled", "MFA verification is disabled for Phone");
  if (!context.settings.totpVerifyEnabled) throw unprocessable("mfa_totp_verify_not_enabled", "MFA verification is disabled for TOTP");
  const created = await context.db.begin(async (tx) => {
    const row = await insertChallenge(tx, factor.id, client.ip ?? "127.0.0.1");
    await recordAudit(tx, caller.record.user, "challenge_created", client.ip, { factor_id: factor.id, factor_status: factor.status });
    return row;
  });
  const expiresAt = Math.floor(Date.parse(created.created_at) / 1000) + CHALLENGE_EXPIRY_SECONDS;
  return Response.json({ id: created.id, type: "totp", expires_at: expiresAt });
}

/**
 * POST /factors/{id}/verify (auth-js mfa.verify): checks the TOTP code against the challenge. A
 * good code raises the session to aal2 (amr gains `totp`), verifies a new factor, ends the user's
 * aal1 sessions and answers a fresh session; a wrong one is 422 mfa_verification_failed.
 */
async function verifyFactor(context: AuthContext, request: Request, factorId: string): Promise<Response> {
  const client = clientInfo(request);
  context.limits.take("factor_verify", client.ip);
  const caller = await requireFactorCaller(request, context);
  const factor = await loadFactor(context, caller.record, factorId);
  const body = await readBody(request, verifyFactorBody);
  const code = body.code ?? "";
  if (code === "") throw badRequest("validation_failed", "Code needs to be non-empty");
  if (factor.factor_type !== "totp") throw unprocessable("mfa_phone_verify_not_enabled", "MFA verification is disabled for Phone");
  if (!context.settings.totpVerifyEnabled) throw unprocessable("mfa_totp_verify_not_enabled", "MFA verification is disabled for TOTP");
  const challengeId = body.challenge_id ?? "";
  const found = isUuid(challengeId) ? await findChallenge(context.db, factor.id, challengeId) : null;
  if (!found) throw unprocessable("mfa_factor_not_found", "MFA factor with the provided challenge ID not found");
  if (found.verified_at !== null || found.ip_address !== (client.ip ?? "127.0.0.1")) {
    throw unprocessable("mfa_ip_address_mismatch", "Challenge and verify IP addresses mismatch.");
  }
  if (Date.now() > Date.parse(found.created_at) + CHALLENGE_EXPIRY_SECONDS * 1000) {
    await deleteChallenge(context.db, found.id);
    throw unprocessable("mfa_challenge_expired", `MFA challenge ${found.id} has expired, verify against another challenge or create a new challenge.`);
  }
  if (totp(factor.secret ?? "").validate({ token: code, window: 1 }) === null) {
    throw unprocessable("mfa_verification_failed", "Invalid TOTP code entered");
  }
  const session = await context.db.begin(async (tx) => {
    await recordAudit(tx, caller.record.user, "verification_attempted", client.ip, { factor_id: factor.id, challenge_id: found.id, factor_type: "totp" });
    await markChallengeVerified(tx, found.id);
    if (factor.status !== "verified") await markFactorVerified(tx, factor.id);
    const upgraded = await upgradeSession(tx, context, caller.record.user.id, caller.session.id, "totp", factor.id);
    await deleteAal1Sessions(tx, caller.record.user.id);
    await deleteUnverifiedFactors(tx, caller.record.user.id, "totp");
    return upgraded;
  });
  return Response.json(session);
}

/** DELETE /factors/{id} (auth-js mfa.unenroll): a verified factor goes only from an aal2 session. */
async function unenroll(context: AuthContext, request: Request, factorId: string): Promise<Response> {
  const caller = await requireFactorCaller(request, context);
  const factor = await loadFactor(context, caller.record, factorId);
  if (factor.status === "verified" && caller.session.aal !== "aal2") throw unprocessable("insufficient_aal", "AAL2 required to unenroll verified factor");
  await context.db.begin(async (tx) => {
    await deleteFactor(tx, factor.id);
    await recordAudit(tx, caller.record.user, "factor_unenrolled", clientInfo(request).ip, { factor_id: factor.id, factor_status: factor.status, session_id: caller.session.id });
    await downgradeSessions(tx, factor);
  });
  return Response.json({ id: factor.id });
}

/** The user of an admin factor route (GoTrue's loadUser: a non-UUID or unknown id is 404). */
async function adminTarget(context: AuthContext, userId: string): Promise<UserRecord> {
  if (!isUuid(userId)) throw notFound("validation_failed", "user_id must be an UUID");
  const record = await findUserById(context.db, userId);
  if (!record) throw notFound("user_not_found", "User not found");
  return record;
}

/** Routes for /factors and the admin API's /admin/users/{id}/factors. */
export function factorRoutes(context: AuthContext): Hono {
  const app = new Hono();
  app.post("/factors", (c) => enroll(context, c.req.raw));
  app.post("/factors/:id/challenge", (c) => challenge(context, c.req.raw, c.req.param("id")));
  app.post("/factors/:id/verify", (c) => verifyFactor(context, c.req.raw, c.req.param("id")));
  app.delete("/factors/:id", (c) => unenroll(context, c.req.raw, c.req.param("id")));
  app.get("/admin/users/:id/factors", async (c) => {
    requireAdmin(c.req.raw, context);
    const record = await adminTarget(context, c.req.param("id"));
    return Response.json(record.factors.map(factorJson));
  });
  app.delete("/admin/users/:id/factors/:factor", async (c) => {
    requireAdmin(c.req.raw, context);
    const record = await adminTarget(context, c.req.param("id"));
    const factor = await loadFactor(context, record, c.req.param("factor"));
    await context.db.begin(async (tx) => {
      await recordAudit(tx, record.user, "factor_deleted", clientInfo(c.req.raw).ip, { user_id: record.user.id, factor_id: factor.id });
      await deleteFactor(tx, factor.id);
    });
    return Response.json(factorJson(factor));
  });
  return app;
}

