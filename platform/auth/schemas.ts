import { z } from "zod";

// Bodies are decoded the way GoTrue's Go structs decode them: unknown keys are ignored, and JSON
// null is the same as an absent key (Go leaves the zero value). A wrong type is a decoding error.
const text = z.string().nullish();
const flag = z.boolean().nullish();
const object = z.record(z.string(), z.unknown()).nullish();

/** POST /signup (auth-js `signUp`, also `signInAnonymously` when email and phone are absent). */
export const signupBody = z.object({
  email: text,
  phone: text,
  password: text,
  data: object,
  channel: text,
  code_challenge: text,
  code_challenge_method: text,
});
/** Decoded POST /signup body. */
export type SignupBody = z.infer<typeof signupBody>;

/** POST /token?grant_type=password. */
export const passwordGrantBody = z.object({ email: text, phone: text, password: text });
/** Decoded password-grant body. */
export type PasswordGrantBody = z.infer<typeof passwordGrantBody>;

/** POST /token?grant_type=refresh_token. */
export const refreshGrantBody = z.object({ refresh_token: text });
/** Decoded refresh-grant body. */
export type RefreshGrantBody = z.infer<typeof refreshGrantBody>;

/** POST /token?grant_type=pkce (auth-js `exchangeCodeForSession`). */
export const pkceGrantBody = z.object({ auth_code: text, code_verifier: text });
/** Decoded PKCE-grant body. */
export type PkceGrantBody = z.infer<typeof pkceGrantBody>;

/** PUT /user (auth-js `updateUser`). */
export const userUpdateBody = z.object({
  email: text,
  password: text,
  current_password: text,
  phone: text,
  nonce: text,
  data: object,
  app_metadata: object,
  channel: text,
  code_challenge: text,
  code_challenge_method: text,
});
/** Decoded PUT /user body. */
export type UserUpdateBody = z.infer<typeof userUpdateBody>;

/** POST /admin/users and PUT /admin/users/{id} (auth-js `admin.createUser` / `updateUserById`). */
export const adminUserBody = z.object({
  id: text,
  aud: text,
  role: text,
  email: text,
  phone: text,
  password: text,
  password_hash: text,
  email_confirm: flag,
  phone_confirm: flag,
  user_metadata: object,
  app_metadata: object,
  ban_duration: text,
});
/** Decoded admin user body. */
export type AdminUserBody = z.infer<typeof adminUserBody>;

/** DELETE /admin/users/{id} (auth-js `admin.deleteUser`). */
export const adminDeleteBody = z.object({ should_soft_delete: flag });
/** Decoded admin delete body. */
export type AdminDeleteBody = z.infer<typeof adminDeleteBody>;

/** POST /verify (auth-js `verifyOtp`): `{type, token_hash}` or `{type, email, token}`. */
export const verifyBody = z.object({
  type: text,
  token: text,
  token_hash: text,
  email: text,
  phone: text,
  redirect_to: text,
});
/** Decoded POST /verify body. */
export type VerifyBody = z.infer<typeof verifyBody>;

/** Largest value GoTrue's strconv.ParseUint reads; anything above is a 400 there, as here. */
const MAX_UINT64 = 18446744073709551615n;

/** A `page` or `per_page` query value: digits, within a uint64. */
function pageNumber(name: string) {
  return z
    .string()
    .regex(/^\d*$/, `${name} must be a non-negative integer`)
    .refine((value) => !/^\d+$/.test(value) || BigInt(value) <= MAX_UINT64, `${name} is out of range`)
    .optional();
}

/** GET /admin/users query: digits only, as Go's strconv.ParseUint accepts; empty means default. */
export const paginationQuery = z.object({
  page: pageNumber("page"),
  per_page: pageNumber("per_page"),
});

/** POST /otp (auth-js `signInWithOtp`): e-mail (magic link and code) or phone (SMS code). */
export const otpBody = z.object({
  email: text,
  phone: text,
  create_user: flag,
  data: object,
  channel: text,
  code_challenge: text,
  code_challenge_method: text,
});
/** Decoded POST /otp body. */
export type OtpBody = z.infer<typeof otpBody>;

/** POST /magiclink (the legacy magic-link endpoint). */
export const magicLinkBody = z.object({ email: text, data: object, code_challenge: text, code_challenge_method: text });

/** POST /recover (auth-js `resetPasswordForEmail`). */
export const recoverBody = z.object({ email: text, code_challenge: text, code_challenge_method: text });

/** POST /resend (auth-js `resend`). */
export const resendBody = z.object({ type: text, email: text, phone: text, code_challenge: text, code_challenge_method: text });

/** POST /invite (auth-js `admin.inviteUserByEmail`). */
export const inviteBody = z.object({ email: text, data: object });

/** POST /admin/generate_link (auth-js `admin.generateLink`). */
export const generateLinkBody = z.object({
  type: text,
  email: text,
  new_email: text,
  password: text,
  data: object,
  redirect_to: text,
});

/** POST /factors (auth-js `mfa.enroll`). */
export const enrollFactorBody = z.object({ friendly_name: text, factor_type: text, issuer: text, phone: text });

/** POST /factors/{id}/challenge (auth-js `mfa.challenge`). */
export const challengeFactorBody = z.object({ channel: text });

/** POST /factors/{id}/verify (auth-js `mfa.verify`). */
export const verifyFactorBody = z.object({ challenge_id: text, code: text });
