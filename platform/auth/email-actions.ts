import type { AuthContext } from "./context.ts";
import type { Db } from "./db.ts";
import { confirmEmail, refreshProviders, reload, upsertContactIdentity } from "./accounts.ts";
import { recordAudit } from "./audit-log.ts";
import { actionLink, sendAuthMail } from "./mailer.ts";
import { clearAllOneTimeTokens, createOneTimeToken } from "./one-time-tokens.ts";
import { assertSendFrequency, generateOtp, tokenHash } from "./otp.ts";
import { withFlowPrefix, type FlowType } from "./pkce.ts";
import { updateUser, type UserRow } from "./users-repository.ts";

// GoTrue's send* functions: each checks the user's send frequency (`max_frequency`), mints a code,
// mails it with its link to the mail catcher, and records the code's hash both in the users row's
// token column and in auth.one_time_tokens, where /verify looks it up. Run them inside the
// caller's transaction: a mail that cannot be sent leaves nothing changed. In a PKCE flow the
// stored hash, and so the link's token, carries GoTrue's `pkce_` prefix, which tells /verify to
// answer with an auth code instead of a session (the caller has created the flow state).

function baseData(context: AuthContext, user: UserRow) {
  return { SiteURL: context.settings.siteUrl, Email: user.email ?? "", Data: user.raw_user_meta_data ?? {} };
}

/** Mints a code for `address` with its hash, prefixed for a PKCE flow. */
function mint(context: AuthContext, address: string, flow: FlowType = "implicit"): { otp: string; hash: string } {
  const otp = generateOtp(context.settings.emailOtpLength);
  return { otp, hash: withFlowPrefix(tokenHash(address, otp), flow) };
}

/** The signup confirmation mail (signup with confirmations on, and `resend` of type signup). */
export async function sendConfirmation(db: Db, context: AuthContext, user: UserRow, redirectTo: string, flow: FlowType): Promise<void> {
  assertSendFrequency(user.confirmation_sent_at, context.settings.emailMaxFrequencyMs, "over_email_send_rate_limit");
  const email = user.email ?? "";
  const { otp, hash } = mint(context, email, flow);
  await sendAuthMail(context, "confirmation", email, {
    ...baseData(context, user), Token: otp, TokenHash: hash, RedirectTo: redirectTo, ConfirmationURL: actionLink(context, hash, "signup", redirectTo),
  }, "Error sending confirmation email");
  await updateUser(db, user.id, { confirmation_token: hash, confirmation_sent_at: "now" });
  await createOneTimeToken(db, user.id, email, hash, "confirmation_token");
}

/** The invitation mail of POST /invite (no frequency limit: only an admin can send it). */
export async function sendInvite(db: Db, context: AuthContext, user: UserRow, redirectTo: string): Promise<void> {
  const email = user.email ?? "";
  const { otp, hash } = mint(context, email);
  await sendAuthMail(context, "invite", email, {
    ...baseData(context, user), Token: otp, TokenHash: hash, RedirectTo: redirectTo, ConfirmationURL: actionLink(context, hash, "invite", redirectTo),
  }, "Error sending invite email");
  await updateUser(db, user.id, { confirmation_token: hash, confirmation_sent_at: "now", invited_at: "now" });
  await createOneTimeToken(db, user.id, email, hash, "confirmation_token");
}

/**
 * The password recovery mail, or the magic link (GoTrue's magic link is a recovery with another
 * template and link type; both share recovery_token and its frequency timer).
 */
export async function sendRecoveryOrMagicLink(db: Db, context: AuthContext, user: UserRow, kind: "recovery" | "magiclink", redirectTo: string, flow: FlowType): Promise<void> {
  assertSendFrequency(user.recovery_sent_at, context.settings.emailMaxFrequencyMs, "over_email_send_rate_limit");
  const email = user.email ?? "";
  const { otp, hash } = mint(context, email, flow);
  await sendAuthMail(context, kind === "recovery" ? "recovery" : "magic_link", email, {
    ...baseData(context, user), Token: otp, TokenHash: hash, RedirectTo: redirectTo, ConfirmationURL: actionLink(context, hash, kind, redirectTo),
  }, kind === "recovery" ? "Error sending recovery email" : "Error sending magic link email");
  await updateUser(db, user.id, { recovery_token: hash, recovery_sent_at: "now" });
  await createOneTimeToken(db, user.id, email, hash, "recovery_token");
}

/** The reauthentication code of GET /reauthenticate (a nonce for `updateUser({password, nonce})`). */
export async function sendReauthentication(db: Db, context: AuthContext, user: UserRow): Promise<void> {
  assertSendFrequency(user.reauthentication_sent_at, context.settings.emailMaxFrequencyMs, "over_email_send_rate_limit");
  const email = user.email ?? "";
  const { otp, hash } = mint(context, email);
  await sendAuthMail(context, "reauthentication", email, { ...baseData(context, user), Token: otp }, "Error sending reauthentication email");
  await updateUser(db, user.id, { reauthentication_token: hash, reauthentication_sent_at: "now" });
  await createOneTimeToken(db, user.id, email, hash, "reauthentication_token");
}

/**
 * Starts an email change as GoTrue's sendEmailChange does: the new address waits in `email_change`
 * (the API's `new_email`) with a code of its own; with `double_confirm_changes` the current address
 * gets one too. Each address receives its link and code; the change completes at /verify.
 */
export async function sendEmailChange(db: Db, context: AuthContext, user: UserRow, newEmail: string, redirectTo: string, flow: FlowType): Promise<void> {
  assertSendFrequency(user.email_change_sent_at, context.settings.emailMaxFrequencyMs, "over_email_send_rate_limit");
  const next = mint(context, newEmail, flow);
  const current = context.settings.doubleConfirmEmailChanges && user.email ? mint(context, user.email, flow) : null;
  const data = { ...baseData(context, user), NewEmail: newEmail, RedirectTo: redirectTo };
  await sendAuthMail(context, "email_change", newEmail, {
    ...data, SendingTo: newEmail, Token: next.otp, TokenHash: next.hash, ConfirmationURL: actionLink(context, next.hash, "email_change", redirectTo),
  }, "Error sending email change email");
  if (current && user.email) {
    await sendAuthMail(context, "email_change", user.email, {
      ...data, SendingTo: user.email, Token: current.otp, TokenHash: current.hash, ConfirmationURL: actionLink(context, current.hash, "email_change", redirectTo),
    }, "Error sending email change email");
  }
  await updateUser(db, user.id, {
    email_change: newEmail,
    email_change_token_new: next.hash,
    email_change_token_current: current?.hash ?? "",
    email_change_confirm_status: 0,
    email_change_sent_at: "now",
  });
  if (current && user.email) await createOneTimeToken(db, user.id, user.email, current.hash, "email_change_token_current");
  await createOneTimeToken(db, user.id, newEmail, next.hash, "email_change_token_new");
}

/**
 * Applies a confirmed email change (GoTrue's emailChangeVerify + ConfirmEmailChange): the pending
 * address becomes the email, the email identity follows, the tokens are cleared, an unconfirmed
 * user counts as confirmed and an anonymous user becomes a permanent one.
 */
export async function completeEmailChange(db: Db, user: UserRow, ip: string | null): Promise<void> {
  const newEmail = user.email_change ?? "";
  await recordAudit(db, user, "user_modified", ip);
  await upsertContactIdentity(db, await reload(db, user.id), "email", newEmail, true);
  await updateUser(db, user.id, {
    email: newEmail,
    email_change: "",
    email_change_token_current: "",
    email_change_token_new: "",
    email_change_confirm_status: 0,
    is_anonymous: false,
  });
  await clearAllOneTimeTokens(db, user.id);
  const changed = await reload(db, user.id);
  if (!changed.user.email_confirmed_at) await confirmEmail(db, changed);
  if (user.is_anonymous) await refreshProviders(db, user.id);
}
