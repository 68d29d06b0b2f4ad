import type { AuthContext } from "./context.ts";
import type { Db } from "./db.ts";
import { AuthError } from "./errors.ts";
import { createOneTimeToken, type OneTimeTokenType } from "./one-time-tokens.ts";
import { assertSendFrequency, tokenHash } from "./otp.ts";
import { updateUser, type UserRow } from "./users-repository.ts";

/** What a phone code is for, and so which users column holds its hash. */
export type PhoneOtpPurpose = "confirmation" | "phone_change" | "reauthentication";

const COLUMNS = {
  confirmation: { token: "confirmation_token", sentAt: "confirmation_sent_at", ott: "confirmation_token" },
  phone_change: { token: "phone_change_token", sentAt: "phone_change_sent_at", ott: "phone_change_token" },
  reauthentication: { token: "reauthentication_token", sentAt: "reauthentication_sent_at", ott: "reauthentication_token" },
} as const satisfies Record<PhoneOtpPurpose, { token: keyof UserRow; sentAt: keyof UserRow; ott: OneTimeTokenType }>;

/**
 * GoTrue's sendPhoneConfirmation without an SMS provider, as the CLI allows: a number listed in
 * `[auth.sms.test_otp]` gets its fixed code (nothing is sent; the answer's message id is
 * "test-otp"); any other number fails as GoTrue fails when the provider cannot send (422
 * sms_send_failed). The per-number frequency (`[auth.sms] max_frequency`) applies to both, and the
 * code's hash is stored as GoTrue stores it.
 */
export async function sendPhoneOtp(db: Db, context: AuthContext, user: UserRow, phone: string, purpose: PhoneOtpPurpose): Promise<string> {
  const columns = COLUMNS[purpose];
  assertSendFrequency(user[columns.sentAt] as string | null, context.settings.smsMaxFrequencyMs, "over_sms_send_rate_limit");
  const otp = context.settings.smsTestOtp[phone];
  if (otp === undefined) {
    throw new AuthError(422, "sms_send_failed", `Error sending ${purpose} OTP to provider: no SMS provider is configured; only [auth.sms.test_otp] numbers receive codes locally`);
  }
  const hash = tokenHash(phone, otp);
  await updateUser(db, user.id, {
    [columns.token]: hash,
    [columns.sentAt]: "now",
    ...(purpose === "phone_change" ? { phone_change: phone } : {}),
  });
  await createOneTimeToken(db, user.id, phone, hash, columns.ott);
  return "test-otp";
}
