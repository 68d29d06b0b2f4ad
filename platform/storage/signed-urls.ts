import { signHs256 } from "../keys/api-keys.ts";
import type { VerificationKeys } from "../keys/verify-jwt.ts";
import { storageErrors } from "./errors.ts";
import { verifyToken } from "./identity.ts";

/**
 * Signed download URLs. The token is an HS256 JWT over `url` = "bucket/path" (and, for image URLs,
 * the `transformations` it was signed for) with `iat` and `exp`, signed with the project's JWT
 * secret as Storage signs it (header `{alg, typ}`, claims in that order), so a URL minted here is
 * shaped like one minted by Storage. Whoever holds the URL can download until `exp`; no
 * Authorization is needed. Signed upload URLs work the same way with their own scope.
 */

/** Mints the token for `bucket/path` valid for `expiresIn` seconds. */
export function signObjectToken(bucketId: string, objectName: string, expiresIn: number, keys: VerificationKeys, transformations?: string): string {
  const now = Math.floor(Date.now() / 1000);
  return signHs256({ url: `${bucketId}/${objectName}`, ...(transformations ? { transformations } : {}), iat: now, exp: now + expiresIn }, keys.secret);
}

/** The path Storage answers with (unencoded: storage-js runs `encodeURI` over it). */
export function signedUrlPath(bucketId: string, objectName: string, token: string): string {
  return `/object/sign/${bucketId}/${objectName}?token=${token}`;
}

/**
 * Checks a signed-URL token against the path it is used on. An expired or forged token is
 * InvalidJWT (with the reason); a valid token for another object, or an upload token used to
 * download, is InvalidSignature.
 */
export function verifyObjectToken(token: string | undefined, bucketId: string, objectName: string, keys: VerificationKeys): { transformations: string | null } {
  const payload = verifiedPayload(token, bucketId, objectName, keys);
  if (payload.scope === UPLOAD_SCOPE) throw storageErrors.invalidSignature();
  return { transformations: typeof payload.transformations === "string" ? payload.transformations : null };
}

/** Marks upload tokens, so one can not be replayed as a download token or the reverse. */
const UPLOAD_SCOPE = "upload";

/** How long a signed upload URL stays valid, as on Storage (two hours). */
const SIGNED_UPLOAD_TTL_SECONDS = 2 * 60 * 60;

/** What a signed upload URL grants: writing one object, owned by whoever signed it. */
export interface UploadGrant {
  owner: string | null;
  upsert: boolean;
}

/** Mints the token of a signed upload URL for `bucket/path`. */
export function signUploadToken(bucketId: string, objectName: string, grant: UploadGrant, keys: VerificationKeys): string {
  const now = Math.floor(Date.now() / 1000);
  // JSON leaves an undefined owner out: a URL signed without a user carries no owner claim.
  return signHs256({ url: `${bucketId}/${objectName}`, owner: grant.owner ?? undefined, upsert: grant.upsert, scope: UPLOAD_SCOPE, iat: now, exp: now + SIGNED_UPLOAD_TTL_SECONDS }, keys.secret);
}

/** The path of a signed upload URL, as Storage answers it. */
export function signedUploadPath(bucketId: string, objectName: string, token: string): string {
  return `/object/upload/sign/${bucketId}/${objectName}?token=${token}`;
}

/** Checks an upload token against its path (errors as for downloads) and returns its grant. */
export function verifyUploadToken(token: string | undefined, bucketId: string, objectName: string, keys: VerificationKeys): UploadGrant {
  const payload = verifiedPayload(token, bucketId, objectName, keys);
  if (payload.scope !== UPLOAD_SCOPE) throw storageErrors.invalidSignature();
  return { owner: typeof payload.owner === "string" ? payload.owner : null, upsert: payload.upsert === true };
}

function verifiedPayload(token: string | undefined, bucketId: string, objectName: string, keys: VerificationKeys) {
  if (!token) throw storageErrors.missingParameter("token");
  const payload = verifyToken(token, keys, storageErrors.invalidJwt);
  if (payload.url !== `${bucketId}/${objectName}`) throw storageErrors.invalidSignature();
  return payload;
}
