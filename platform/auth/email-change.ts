import { createHash, randomInt } from "node:crypto";
import type { AuthContext } from "./context.ts";
import type { Db } from "./db.ts";
import { internalError } from "./errors.ts";
import { sendAuthMail } from "./mailer.ts";
import { confirmEmail, refreshProviders, reload, upsertContactIdentity } from "./accounts.ts";
import { recordAudit } from "./audit-log.ts";
import { updateUser, type UserRecord, type UserRow } from "./users-repository.ts";

/** GoTrue's GenerateTokenHash: hex SHA-224 of the address followed by the one-time code. */
export function tokenHash(address: string, otp: string): string {
  return createHash("sha224").update(address + otp).digest("hex");
}

/** A six-digit one-time code (`[auth.email] otp_length` is 6 in this project). */
function newOtp(): string {
  return String(randomInt(0, 1_000_000)).padStart(6, "0");
}

function confirmationMail(context: AuthContext, to: string, newEmail: string, otp: string, hash: string) {
  const link = `${context.config.jwtIssuer}/verify?token=${hash}&type=email_change&redirect_to=${encodeURIComponent(context.settings.siteUrl)}`;
  return {
    to,
    subject: "Confirm Email Change",
    html: `<h2>Confirm Change of Email</h2><p>Follow this link to confirm the update of your email to ${newEmail}:</p><p><a href="${link}">Change Email</a></p><p>Or enter this code: ${otp}</p>`,
  };
}

/**
 * Starts an email change as GoTrue's sendEmailChange does: the new address waits in `email_change`
 * (the API's `new_email`) with a hashed token; with `double_confirm_changes` the current address
 * gets its own token too. Links and codes go to the mail catcher; the change completes at /verify.
 */
export async function startEmailChange(db: Db, context: AuthContext, record: UserRecord, newEmail: string, ip: string | null): Promise<void> {
  const { user } = record;
  if (user.is_anonymous && context.settings.mailerAutoconfirm) {
    // An anonymous user adding an email is a signup; with autoconfirm GoTrue applies it at once.
    await updateUser(db, user.id, { email_change: newEmail });
    await completeEmailChange(db, (await reload(db, user.id)).user, ip);
    return;
  }
  const otpNew = newOtp();
  const hashNew = tokenHash(newEmail, otpNew);
  const secure = context.settings.doubleConfirmEmailChanges && Boolean(user.email);
  const otpCurrent = secure ? newOtp() : "";
  const hashCurrent = secure ? tokenHash(user.email ?? "", otpCurrent) : "";
  await updateUser(db, user.id, {
    email_change: newEmail,
    email_change_token_new: hashNew,
    email_change_token_current: hashCurrent,
    email_change_confirm_status: 0,
    email_change_sent_at: "now",
  });
  try {
    await sendAuthMail(context.config, confirmationMail(context, newEmail, newEmail, otpNew, hashNew));
    if (secure && user.email) await sendAuthMail(context.config, confirmationMail(context, user.email, newEmail, otpCurrent, hashCurrent));
  } catch (error) {
    throw internalError("Error sending email change email", error);
  }
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
  const changed = await reload(db, user.id);
  if (!changed.user.email_confirmed_at) await confirmEmail(db, changed);
  if (user.is_anonymous) await refreshProviders(db, user.id);
}
