import { createHash, randomInt } from "node:crypto";
import { AuthError, type AuthErrorCode } from "./errors.ts";

/** GoTrue's GenerateTokenHash: hex SHA-224 of the address (e-mail or phone) followed by the code. */
export function tokenHash(address: string, otp: string): string {
  return createHash("sha224").update(address + otp).digest("hex");
}

/** A one-time code of `length` digits from a CSPRNG (GoTrue's GenerateOtp). */
export function generateOtp(length: number): string {
  let code = "";
  for (let index = 0; index < length; index++) code += String(randomInt(0, 10));
  return code;
}

/** Whether a code or link sent at `sentAt` is past `expirySeconds` (GoTrue's isOtpExpired). */
export function otpExpired(sentAt: string | null, expirySeconds: number, now = Date.now()): boolean {
  return sentAt === null || now > Date.parse(sentAt) + expirySeconds * 1000;
}

/**
 * GoTrue's per-user send frequency (`max_frequency`): another mail or SMS of the same kind within
 * the window is 429 with the seconds left, as GoTrue words it.
 */
export function assertSendFrequency(sentAt: string | null, frequencyMs: number, code: Extract<AuthErrorCode, "over_email_send_rate_limit" | "over_sms_send_rate_limit">, now = Date.now()): void {
  if (sentAt === null) return;
  const allowedAt = Date.parse(sentAt) + frequencyMs;
  if (allowedAt > now) {
    const seconds = Math.floor((allowedAt - now) / 1000);
    throw new AuthError(429, code, `For security purposes, you can only request this after ${seconds} seconds.`);
  }
}
