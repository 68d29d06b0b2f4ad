/** GoTrue error codes this service emits (a subset of GoTrue's apierrors/errorcode.go). */
export type AuthErrorCode =
  | "unexpected_failure"
  | "validation_failed"
  | "bad_json"
  | "bad_jwt"
  | "no_authorization"
  | "not_admin"
  | "email_exists"
  | "phone_exists"
  | "user_already_exists"
  | "user_not_found"
  | "user_banned"
  | "session_not_found"
  | "session_expired"
  | "refresh_token_not_found"
  | "refresh_token_already_used"
  | "invalid_credentials"
  | "email_not_confirmed"
  | "phone_not_confirmed"
  | "weak_password"
  | "same_password"
  | "signup_disabled"
  | "email_provider_disabled"
  | "phone_provider_disabled"
  | "anonymous_provider_disabled"
  | "unexpected_audience"
  | "otp_expired"
  | "email_address_invalid"
  | "email_address_not_authorized"
  | "over_request_rate_limit"
  | "over_email_send_rate_limit"
  | "over_sms_send_rate_limit"
  | "otp_disabled"
  | "sms_send_failed"
  | "reauthentication_needed"
  | "reauthentication_not_valid"
  | "insufficient_aal"
  | "mfa_factor_not_found"
  | "mfa_factor_name_conflict"
  | "mfa_ip_address_mismatch"
  | "mfa_challenge_expired"
  | "mfa_verification_failed"
  | "too_many_enrolled_mfa_factors"
  | "mfa_totp_enroll_not_enabled"
  | "mfa_totp_verify_not_enabled"
  | "mfa_phone_enroll_not_enabled"
  | "mfa_phone_verify_not_enabled"
  | "mfa_webauthn_enroll_not_enabled"
  | "mfa_webauthn_verify_not_enabled"
  | "saml_provider_disabled"
  | "manual_linking_disabled"
  | "provider_disabled"
  | "web3_provider_disabled"
  | "passkey_disabled"
  | "feature_disabled"
  | "bad_code_verifier"
  | "flow_state_not_found"
  | "flow_state_expired"
  | "bad_oauth_callback"
  | "identity_not_found"
  | "not_found"
  | "method_not_allowed";

/** An error the service answers with: HTTP status, GoTrue error code and the user-facing message. */
export class AuthError extends Error {
  readonly status: number;
  readonly code: AuthErrorCode;
  /** `weak_password.reasons` for code weak_password (auth-js builds AuthWeakPasswordError from it). */
  readonly reasons: string[] | undefined;

  /** What went wrong underneath, for the log only (GoTrue's WithInternalError). */
  readonly internal: unknown;

  constructor(status: number, code: AuthErrorCode, message: string, reasons?: string[], internal?: unknown) {
    super(message);
    this.internal = internal;
    this.name = "AuthError";
    this.status = status;
    this.code = code;
    this.reasons = reasons;
  }
}

/** An OAuth2-style error (`{error, error_description}`, always 400), which a few /token paths use. */
export class OAuthError extends Error {
  readonly error: string;

  constructor(error: string, description: string) {
    super(description);
    this.name = "OAuthError";
    this.error = error;
  }
}

/** 400 with a code. */
export const badRequest = (code: AuthErrorCode, message: string) => new AuthError(400, code, message);
/** 403 with a code. */
export const forbidden = (code: AuthErrorCode, message: string) => new AuthError(403, code, message);
/** 404 with a code. */
export const notFound = (code: AuthErrorCode, message: string) => new AuthError(404, code, message);
/** 429 with a code. */
export const tooManyRequests = (code: AuthErrorCode, message: string) => new AuthError(429, code, message);
/** 422 with a code. */
export const unprocessable = (code: AuthErrorCode, message: string) => new AuthError(422, code, message);
/**
 * 500 unexpected_failure with the terse message GoTrue uses at that point (e.g. "Database error
 * querying schema"); the cause is kept for the log, never sent to the client.
 */
export const internalError = (message: string, cause?: unknown) => new AuthError(500, "unexpected_failure", message, undefined, cause);

/** GoTrue's answer to an error it did not anticipate. */
const UNHANDLED_MESSAGE = "Unexpected failure, please check server logs for more information";

/** The API version auth-js sends and GoTrue echoes; from it on, errors use `{code, message}`. */
export const API_VERSION_HEADER = "X-Supabase-Api-Version";
const API_VERSION_2024 = Date.UTC(2024, 0, 1);

/**
 * Whether the request asked for the 2024-01-01 error format. GoTrue takes the closest known version
 * not after the one sent, so any valid date from 2024-01-01 on selects the new format.
 */
export function wantsVersionedErrors(request: Request): boolean {
  const value = request.headers.get(API_VERSION_HEADER);
  if (!value || !/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const time = Date.parse(`${value}T00:00:00Z`);
  return Number.isFinite(time) && time >= API_VERSION_2024;
}

/**
 * Serialises an error as GoTrue does: `{code, message}` (+ echoed version header) for clients that
 * send X-Supabase-Api-Version >= 2024-01-01, the legacy `{code: <status>, error_code, msg}` otherwise.
 * Anything that is not an AuthError becomes GoTrue's generic 500.
 */
export function errorResponse(error: unknown, request: Request): Response {
  if (error instanceof OAuthError) {
    const headers = new Headers({ "Content-Type": "application/json" });
    if (wantsVersionedErrors(request)) headers.set(API_VERSION_HEADER, "2024-01-01");
    return new Response(JSON.stringify({ error: error.error, error_description: error.message }), { status: 400, headers });
  }
  const known = error instanceof AuthError ? error : new AuthError(500, "unexpected_failure", UNHANDLED_MESSAGE);
  const headers = new Headers({ "Content-Type": "application/json", "x-sb-error-code": known.code });
  let body: Record<string, unknown>;
  if (wantsVersionedErrors(request)) {
    headers.set(API_VERSION_HEADER, "2024-01-01");
    body = { code: known.code, message: known.message };
  } else {
    body = { code: known.status, error_code: known.code, msg: known.message };
  }
  if (known.reasons) body.weak_password = { reasons: known.reasons };
  return new Response(JSON.stringify(body), { status: known.status, headers });
}
