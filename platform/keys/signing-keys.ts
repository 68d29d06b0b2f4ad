import { createPrivateKey, createPublicKey, sign, type JsonWebKey, type KeyObject } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import type { StackConfig } from "../config/stack-config.ts";
import type { AsymmetricAlgorithm, PublicVerificationKey, VerificationKeys } from "./verify-jwt.ts";
import { PlatformError } from "../process/errors.ts";
import { readAuthSettings, type AuthSettings } from "../auth/settings.ts";

/** The private key that signs access tokens. */
export interface SigningKey {
  kid: string;
  alg: AsymmetricAlgorithm;
  key: KeyObject;
}

/**
 * The keys of a stack, as GoTrue reads GOTRUE_JWT_KEYS from `signing_keys_path`: the legacy
 * secret (HS256, always accepted), the one key whose `key_ops` include "sign" (null: tokens are
 * signed with the secret), every key's public half by kid, and the public JWKs
 * /.well-known/jwks.json publishes.
 */
export interface ProjectKeys extends VerificationKeys {
  signing: SigningKey | null;
  published: JsonWebKey[];
}

/** The members of a private JWK that never leave the service. */
const PRIVATE_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"];

function keyFileError(path: string, problem: string): PlatformError {
  return new PlatformError(
    `[auth] signing_keys_path: ${path} ${problem}.`,
    "Make one with `npx supabase gen signing-key --algorithm ES256` (it prints a JSON key: save it as a one-element JSON array) or comment out signing_keys_path.",
  );
}

function algorithmOf(jwk: JsonWebKey & { alg?: unknown }, path: string): AsymmetricAlgorithm {
  if (jwk.kty === "EC" && jwk.crv === "P-256" && (jwk.alg === undefined || jwk.alg === "ES256")) return "ES256";
  if (jwk.kty === "RSA" && (jwk.alg === undefined || jwk.alg === "RS256")) return "RS256";
  throw keyFileError(path, `has a key that is neither ES256 (EC P-256) nor RS256 (kid ${String((jwk as { kid?: unknown }).kid)})`);
}

/** Reads and checks a signing keys file (a JSON array of private JWKs, as the CLI writes it). */
function readKeyFile(path: string): (JsonWebKey & { kid: string; alg?: string; key_ops?: string[] })[] {
  if (!existsSync(path)) throw keyFileError(path, "does not exist");
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"));
  } catch {
    throw keyFileError(path, "is not JSON");
  }
  if (!Array.isArray(parsed) || parsed.length === 0) throw keyFileError(path, "is not a JSON array of keys");
  for (const key of parsed) {
    if (key === null || typeof key !== "object" || typeof (key as { kid?: unknown }).kid !== "string") throw keyFileError(path, "has a key without a kid");
  }
  return parsed as (JsonWebKey & { kid: string; alg?: string; key_ops?: string[] })[];
}

/** Keys for `settings`; the secret alone when no signing_keys_path is set. */
export function loadProjectKeys(secret: string, settings: AuthSettings): ProjectKeys {
  const byKid = new Map<string, PublicVerificationKey>();
  const published: JsonWebKey[] = [];
  if (settings.signingKeysPath === null) return { secret, byKid, published, signing: null };
  const path = settings.signingKeysPath;
  const signers: SigningKey[] = [];
  for (const jwk of readKeyFile(path)) {
    const alg = algorithmOf(jwk, path);
    let privateKey: KeyObject;
    try {
      privateKey = createPrivateKey({ key: jwk, format: "jwk" });
    } catch {
      throw keyFileError(path, `has a key that is not a valid private ${alg} key (kid ${jwk.kid})`);
    }
    byKid.set(jwk.kid, { alg, key: createPublicKey(privateKey) });
    const publicJwk: Record<string, unknown> = Object.fromEntries(Object.entries(jwk).filter(([member]) => !PRIVATE_MEMBERS.includes(member)));
    // GoTrue publishes every key as a verification key for signatures.
    published.push({ ...publicJwk, alg, use: "sig", key_ops: ["verify"] } as JsonWebKey);
    if (jwk.key_ops?.includes("sign")) signers.push({ kid: jwk.kid, alg, key: privateKey });
  }
  if (signers.length === 0) throw keyFileError(path, 'has no key whose key_ops include "sign"');
  if (signers.length > 1) throw keyFileError(path, 'has several keys whose key_ops include "sign"; GoTrue signs with exactly one');
  return { secret, byKid, published, signing: signers[0] };
}

/** The keys of a running stack (from its profile's config.toml). */
export function stackKeys(config: StackConfig): ProjectKeys {
  return loadProjectKeys(config.jwtSecret, readAuthSettings(config.profile));
}

/**
 * SUPABASE_JWKS as the CLI builds it for functions, and the JWKS PostgREST gets as its jwt-secret:
 * the public signing keys, plus the legacy secret as an `oct` key so HS256 tokens keep working.
 */
export function stackJwks(keys: ProjectKeys): string {
  const oct = { kty: "oct", k: Buffer.from(keys.secret).toString("base64url"), alg: "HS256" };
  return JSON.stringify({ keys: [...keys.published, oct] });
}

/** Signs `header.payload` with an asymmetric key (ES256 signatures are raw r||s, as JWS wants). */
export function signWithKey(signingInput: string, signer: SigningKey): string {
  const options = signer.alg === "ES256" ? { key: signer.key, dsaEncoding: "ieee-p1363" as const } : signer.key;
  return sign("sha256", Buffer.from(signingInput), options).toString("base64url");
}
