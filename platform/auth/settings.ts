import { currentProfile, type ProfileName } from "../config/stack-config.ts";
import { readProjectConfig, table } from "../config/project-config.ts";
import { parseGoDuration } from "./durations.ts";

/** One e-mail template from `[auth.email.template.<type>]`: a subject and/or an HTML file. */
export interface TemplateSettings {
  subject?: string;
  /** Path of the HTML body, relative to the project root as the CLI reads it. */
  contentPath?: string;
}

/** The e-mail templates GoTrue sends, named as config.toml names them. */
export type TemplateType = "invite" | "confirmation" | "recovery" | "magic_link" | "email_change" | "reauthentication";

/** `[auth.rate_limit]`, as the CLI passes it to GoTrue. */
export interface RateLimitSettings {
  /** E-mails sent per hour (applied only with `[auth.email.smtp]`, as under the CLI). */
  emailSent: number;
  smsSent: number;
  /** Anonymous sign-ins per hour per client address. */
  anonymousUsers: number;
  tokenRefresh: number;
  /** OTP, magic-link, recovery and resend requests per 5 minutes per client address. */
  signInSignUps: number;
  /** /verify requests per 5 minutes per client address. */
  tokenVerifications: number;
  web3: number;
}

/** The `[auth]` settings of supabase/config.toml that change how the auth service answers. */
export interface AuthSettings {
  siteUrl: string;
  /** `additional_redirect_urls`: where links may send the browser besides `site_url`. */
  additionalRedirectUrls: string[];
  /** Access-token lifetime in seconds (`jwt_expiry`). */
  jwtExpiry: number;
  enableSignup: boolean;
  enableAnonymousSignIns: boolean;
  minimumPasswordLength: number;
  /** Character sets a password must each touch, from `password_requirements` (empty: none). */
  requiredCharacters: string[];
  enableRefreshTokenRotation: boolean;
  /** Seconds a revoked refresh token may still be exchanged (`refresh_token_reuse_interval`). */
  refreshTokenReuseInterval: number;
  /** `signing_keys_path`, absolute (null: tokens are HS256 with the JWT secret). */
  signingKeysPath: string | null;
  emailEnabled: boolean;
  /** `[auth.email] enable_confirmations = false` is GoTrue's MAILER_AUTOCONFIRM. */
  mailerAutoconfirm: boolean;
  /** `[auth.email] double_confirm_changes`: an email change is confirmed from both addresses. */
  doubleConfirmEmailChanges: boolean;
  /** `[auth.email] secure_password_change`: a password change needs a nonce once the session is a day old. */
  securePasswordChange: boolean;
  /** Milliseconds before another mail of the same kind may go to a user (`max_frequency`). */
  emailMaxFrequencyMs: number;
  /** Digits of an e-mailed code (`otp_length`). */
  emailOtpLength: number;
  /** Seconds an emailed link or code stays valid (`[auth.email] otp_expiry`). */
  emailOtpExpiry: number;
  templates: Partial<Record<TemplateType, TemplateSettings>>;
  phoneEnabled: boolean;
  smsAutoconfirm: boolean;
  /** Milliseconds before another SMS code may go to a number (`[auth.sms] max_frequency`). */
  smsMaxFrequencyMs: number;
  /** `[auth.sms.test_otp]`: numbers (digits only) whose code is fixed and never sent. */
  smsTestOtp: Record<string, string>;
  /** Seconds an SMS code stays valid (the CLI fixes GOTRUE_SMS_OTP_EXP at 6000). */
  smsOtpExpiry: number;
  totpEnrollEnabled: boolean;
  totpVerifyEnabled: boolean;
  phoneMfaEnrollEnabled: boolean;
  phoneMfaVerifyEnabled: boolean;
  maxEnrolledFactors: number;
  rateLimit: RateLimitSettings;
  /** Enabled `[auth.external.<name>]` providers, reported by GET /settings. */
  externalProviders: string[];
  web3SolanaEnabled: boolean;
  web3EthereumEnabled: boolean;
  passkeyEnabled: boolean;
  manualLinkingEnabled: boolean;
}

const LOWER = "abcdefghijklmnopqrstuvwxyz";
const UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const DIGITS = "0123456789";
const SYMBOLS = "!@#$%^&*()_+-=[]{};'\\:\"|<>?,./`~";

// The CLI turns `password_requirements` into GOTRUE_PASSWORD_REQUIRED_CHARACTERS with these sets.
const REQUIRED_CHARACTERS: Record<string, string[]> = {
  "": [],
  letters_digits: [LOWER + UPPER, DIGITS],
  lower_upper_letters_digits: [LOWER, UPPER, DIGITS],
  lower_upper_letters_digits_symbols: [LOWER, UPPER, DIGITS, SYMBOLS],
};

const TEMPLATE_TYPES: TemplateType[] = ["invite", "confirmation", "recovery", "magic_link", "email_change", "reauthentication"];

function bool(value: unknown, fallback: boolean): boolean {
  return typeof value === "boolean" ? value : fallback;
}

function int(value: unknown, fallback: number): number {
  return typeof value === "number" && Number.isFinite(value) ? value : fallback;
}

function text(value: unknown, fallback: string): string {
  return typeof value === "string" ? value : fallback;
}

/** A Go duration from config.toml ("1s", "5s", "1m"); a malformed one falls back, as an absent one does. */
function duration(value: unknown, fallbackMs: number): number {
  if (typeof value !== "string") return fallbackMs;
  try {
    return parseGoDuration(value);
  } catch {
    return fallbackMs;
  }
}

/** Test OTP numbers as GoTrue normalises them: no leading "+" and no spaces. */
function testOtps(value: unknown): Record<string, string> {
  const entries = Object.entries(table(value)).filter((entry): entry is [string, string] => typeof entry[1] === "string");
  return Object.fromEntries(entries.map(([phone, otp]) => [phone.replace(/^\+/, "").replace(/ /g, ""), otp]));
}

function templates(value: unknown): Partial<Record<TemplateType, TemplateSettings>> {
  const section = table(value);
  const result: Partial<Record<TemplateType, TemplateSettings>> = {};
  for (const type of TEMPLATE_TYPES) {
    const entry = table(section[type]);
    const subject = typeof entry.subject === "string" ? entry.subject : undefined;
    const contentPath = typeof entry.content_path === "string" && entry.content_path !== "" ? entry.content_path : undefined;
    if (subject !== undefined || contentPath !== undefined) result[type] = { subject, contentPath };
  }
  return result;
}

/**
 * Reads the auth settings the CLI would pass to GoTrue, with the CLI's defaults for absent keys.
 * The test profile sees test/fixtures/config.toml merged over the project's file.
 */
export function readAuthSettings(profile: ProfileName = currentProfile()): AuthSettings {
  const root = readProjectConfig(profile);
  const auth = table(root.auth);
  const email = table(auth.email);
  const sms = table(auth.sms);
  const mfa = table(auth.mfa);
  const rate = table(auth.rate_limit);
  const external = table(auth.external);
  const web3 = table(auth.web3);
  const requirements = typeof auth.password_requirements === "string" ? auth.password_requirements : "";
  const signingKeysPath = typeof auth.signing_keys_path === "string" && auth.signing_keys_path !== "" ? auth.signing_keys_path : null;
  return {
    siteUrl: text(auth.site_url, "http://127.0.0.1:3000"),
    additionalRedirectUrls: Array.isArray(auth.additional_redirect_urls) ? auth.additional_redirect_urls.filter((url): url is string => typeof url === "string") : [],
    jwtExpiry: int(auth.jwt_expiry, 3600),
    enableSignup: bool(auth.enable_signup, true),
    enableAnonymousSignIns: bool(auth.enable_anonymous_sign_ins, false),
    minimumPasswordLength: Math.max(int(auth.minimum_password_length, 6), 6),
    requiredCharacters: REQUIRED_CHARACTERS[requirements] ?? [],
    enableRefreshTokenRotation: bool(auth.enable_refresh_token_rotation, true),
    refreshTokenReuseInterval: int(auth.refresh_token_reuse_interval, 10),
    signingKeysPath,
    // Older templates name the switch `enable_signup`, newer ones `enabled`.
    emailEnabled: bool(email.enabled, bool(email.enable_signup, true)),
    mailerAutoconfirm: !bool(email.enable_confirmations, false),
    doubleConfirmEmailChanges: bool(email.double_confirm_changes, true),
    securePasswordChange: bool(email.secure_password_change, false),
    emailMaxFrequencyMs: duration(email.max_frequency, 1000),
    emailOtpLength: int(email.otp_length, 6),
    emailOtpExpiry: int(email.otp_expiry, 3600),
    templates: templates(email.template),
    phoneEnabled: bool(sms.enabled, bool(sms.enable_signup, false)),
    smsAutoconfirm: !bool(sms.enable_confirmations, false),
    smsMaxFrequencyMs: duration(sms.max_frequency, 5000),
    smsTestOtp: testOtps(sms.test_otp),
    smsOtpExpiry: 6000,
    totpEnrollEnabled: bool(table(mfa.totp).enroll_enabled, false),
    totpVerifyEnabled: bool(table(mfa.totp).verify_enabled, false),
    phoneMfaEnrollEnabled: bool(table(mfa.phone).enroll_enabled, false),
    phoneMfaVerifyEnabled: bool(table(mfa.phone).verify_enabled, false),
    maxEnrolledFactors: int(mfa.max_enrolled_factors, 10),
    rateLimit: {
      emailSent: int(rate.email_sent, 2),
      smsSent: int(rate.sms_sent, 30),
      anonymousUsers: int(rate.anonymous_users, 30),
      tokenRefresh: int(rate.token_refresh, 150),
      signInSignUps: int(rate.sign_in_sign_ups, 30),
      tokenVerifications: int(rate.token_verifications, 30),
      web3: int(rate.web3, 30),
    },
    externalProviders: Object.entries(external)
      .filter(([, provider]) => table(provider).enabled === true)
      .map(([name]) => name),
    web3SolanaEnabled: bool(table(web3.solana).enabled, false),
    web3EthereumEnabled: bool(table(web3.ethereum).enabled, false),
    passkeyEnabled: bool(table(auth.passkey).enabled, false),
    manualLinkingEnabled: bool(auth.enable_manual_linking, false),
  };
}
