import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "smol-toml";
import { PROJECT_ROOT } from "../config.ts";

/** The `[auth]` settings of supabase/config.toml that change how the auth service answers. */
export interface AuthSettings {
  siteUrl: string;
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
  emailEnabled: boolean;
  /** `[auth.email] enable_confirmations = false` is GoTrue's MAILER_AUTOCONFIRM. */
  mailerAutoconfirm: boolean;
  /** `[auth.email] double_confirm_changes`: an email change is confirmed from both addresses. */
  doubleConfirmEmailChanges: boolean;
  /** Seconds an emailed link or code stays valid (`[auth.email] otp_expiry`). */
  emailOtpExpiry: number;
  phoneEnabled: boolean;
  smsAutoconfirm: boolean;
  /** Enabled `[auth.external.<name>]` providers, reported by GET /settings. */
  externalProviders: string[];
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

type Table = Record<string, unknown>;

function table(value: unknown): Table {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Table) : {};
}

function bool(value: unknown, fallback: boolean): boolean {
  return typeof value === "boolean" ? value : fallback;
}

function int(value: unknown, fallback: number): number {
  return typeof value === "number" && Number.isFinite(value) ? value : fallback;
}

/** Reads the auth settings the CLI would pass to GoTrue, with the CLI's defaults for absent keys. */
export function readAuthSettings(configToml = join(PROJECT_ROOT, "supabase", "config.toml")): AuthSettings {
  const root = table(parse(readFileSync(configToml, "utf8")));
  const auth = table(root.auth);
  const email = table(auth.email);
  const sms = table(auth.sms);
  const external = table(auth.external);
  const requirements = typeof auth.password_requirements === "string" ? auth.password_requirements : "";
  return {
    siteUrl: typeof auth.site_url === "string" ? auth.site_url : "http://127.0.0.1:3000",
    jwtExpiry: int(auth.jwt_expiry, 3600),
    enableSignup: bool(auth.enable_signup, true),
    enableAnonymousSignIns: bool(auth.enable_anonymous_sign_ins, false),
    minimumPasswordLength: Math.max(int(auth.minimum_password_length, 6), 6),
    requiredCharacters: REQUIRED_CHARACTERS[requirements] ?? [],
    enableRefreshTokenRotation: bool(auth.enable_refresh_token_rotation, true),
    refreshTokenReuseInterval: int(auth.refresh_token_reuse_interval, 10),
    emailEnabled: bool(email.enabled, true),
    mailerAutoconfirm: !bool(email.enable_confirmations, false),
    doubleConfirmEmailChanges: bool(email.double_confirm_changes, true),
    emailOtpExpiry: int(email.otp_expiry, 3600),
    phoneEnabled: bool(sms.enable_signup, false),
    smsAutoconfirm: !bool(sms.enable_confirmations, false),
    externalProviders: Object.entries(external)
      .filter(([, provider]) => table(provider).enabled === true)
      .map(([name]) => name),
  };
}
