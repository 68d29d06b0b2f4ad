import { randomUUID } from "node:crypto";
import { baseIdentityData, confirmEmail, createIdentity, mergeMetadata, validateEmail, validatePhone } from "./accounts.ts";
import { recordAudit } from "./audit-log.ts";
import { clientInfo, DEFAULT_ROLE, requestAudience, type AuthContext } from "./context.ts";
import { sendConfirmation } from "./email-actions.ts";
import { badRequest, internalError } from "./errors.ts";
import { createFlowState } from "./flow-states.ts";
import { checkPasswordStrength, hashPassword } from "./passwords.ts";
import { flowOf, validatePkceParams } from "./pkce.ts";
import { referrer } from "./redirects.ts";
import { sendPhoneOtp } from "./sms.ts";
import { findUserById, findUserByPhone, findUserHoldingEmail, insertUser, updateUser, type JsonObject, type UserRecord } from "./users-repository.ts";

/** A signup as GoTrue's Signup takes it (after its body is decoded). */
export interface RegistrationRequest {
  provider: "email" | "phone";
  email?: string;
  phone?: string;
  password: string;
  data: JsonObject;
  /** The client's PKCE challenge (auth-js `flowType: 'pkce'`): the confirmation link then yields an auth code. */
  codeChallenge?: string | null;
  codeChallengeMethod?: string | null;
}

/** What a signup did: a confirmed user (who may sign in now), an unconfirmed one, or none because the address is taken. */
export type Registration =
  | { kind: "confirmed"; record: UserRecord; provider: "email" | "phone" }
  | { kind: "pending"; record: UserRecord }
  | { kind: "exists"; record: UserRecord; address: string };

/**
 * GoTrue's Signup minus issuing the session: validates the password and address, creates the user
 * and its identity (or reuses an unconfirmed one), then confirms at once with autoconfirm, or sends
 * the confirmation mail or SMS code. A confirmed holder of the address comes back as `exists`.
 */
export async function register(context: AuthContext, request: Request, params: RegistrationRequest): Promise<Registration> {
  const { settings } = context;
  if (params.password === "") throw badRequest("validation_failed", "Signup requires a valid password");
  checkPasswordStrength(params.password, settings);
  // A phone signup answers with its session in the body, so there is no link to protect.
  if (params.provider === "phone" && params.codeChallenge) throw badRequest("validation_failed", "PKCE not supported for phone signups");
  const pkce = validatePkceParams(params.codeChallengeMethod, params.codeChallenge);
  const aud = requestAudience(request);
  const client = clientInfo(request);
  let address: string;
  let existing: UserRecord | null;
  try {
    if (params.provider === "email") {
      if (!settings.emailEnabled) throw badRequest("email_provider_disabled", "Email signups are disabled");
      address = validateEmail(params.email ?? "");
      existing = await findUserHoldingEmail(context.db, address, aud);
    } else {
      if (!settings.phoneEnabled) throw badRequest("phone_provider_disabled", "Phone signups are disabled");
      address = validatePhone(params.phone ?? "");
      existing = await findUserByPhone(context.db, address, aud);
    }
  } catch (error) {
    if (error instanceof Error && error.name === "UnreadableUserError") throw internalError("Database error finding user", error);
    throw error;
  }
  const confirmed = (record: UserRecord) => (params.provider === "email" ? record.user.email_confirmed_at : record.user.phone_confirmed_at) !== null;
  if (existing && confirmed(existing)) {
    await recordAudit(context.db, existing.user, "user_repeated_signup", client.ip, { provider: params.provider });
    return { kind: "exists", record: existing, address };
  }
  // Hash outside the transaction: bcrypt is slow and would hold the connection.
  const hash = existing ? null : await hashPassword(params.password);
  const redirectTo = referrer(request, settings);

  return context.db.begin(async (tx): Promise<Registration> => {
    let userId = existing?.user.id;
    if (!userId) {
      userId = randomUUID();
      try {
        await insertUser(tx, {
          id: userId,
          aud,
          role: DEFAULT_ROLE,
          email: params.provider === "email" ? address : null,
          phone: params.provider === "phone" ? address : null,
          encryptedPassword: hash,
          appMetadata: { provider: params.provider, providers: [params.provider] },
          userMetadata: params.data,
        });
      } catch (error) {
        // Typically a trigger on auth.users failing; GoTrue hides the cause the same way.
        throw internalError("Database error saving new user", error);
      }
      // The signup data joins the identity, without overriding the identity's own claims.
      const identityData = mergeMetadata(params.data, baseIdentityData(userId, params.provider === "email" ? { email: address } : {}));
      await createIdentity(tx, userId, params.provider, identityData);
      // GoTrue's RemoveUnconfirmedIdentities: an unconfirmed user's metadata becomes the identity's.
      await updateUser(tx, userId, { raw_user_meta_data: mergeMetadata({}, identityData) });
    }
    const record = await findUserById(tx, userId);
    if (!record) throw internalError("Database error saving new user");
    if (params.provider === "email") {
      if (!settings.mailerAutoconfirm) {
        await recordAudit(tx, record.user, "user_confirmation_requested", client.ip, { provider: "email" });
        if (pkce) await createFlowState(tx, { userId, providerType: "email", authenticationMethod: "email/signup", pkce });
        await sendConfirmation(tx, context, record.user, redirectTo, flowOf(pkce));
        return { kind: "pending", record: (await findUserById(tx, userId)) ?? record };
      }
      await recordAudit(tx, record.user, "user_signedup", client.ip, { provider: "email" });
      await confirmEmail(tx, record);
    } else {
      if (!settings.smsAutoconfirm) {
        await recordAudit(tx, record.user, "user_confirmation_requested", client.ip, { provider: "phone" });
        await sendPhoneOtp(tx, context, record.user, address, "confirmation");
        return { kind: "pending", record: (await findUserById(tx, userId)) ?? record };
      }
      await recordAudit(tx, record.user, "user_signedup", client.ip, { provider: "phone", channel: "sms" });
      await updateUser(tx, userId, { confirmation_token: "", phone_confirmed_at: "now" });
    }
    const done = await findUserById(tx, userId);
    if (!done) throw internalError("Database error saving new user");
    return { kind: "confirmed", record: done, provider: params.provider };
  });
}
