import { SignJWT } from "jose";
import { storageErrors } from "./errors.ts";
import { verifyToken, type StorageKeys } from "./identity.ts";

/**
 * Signed download URLs. The token is an HS256 JWT over `url` = "bucket/path" (and, for image URLs,
 * the `transformations` it was signed for) with `iat` and `exp`, signed with the project's JWT
 * secret as Storage signs it, so a URL minted here is shaped like one
 * minted by Storage. Whoever holds the URL can download until `exp`; no Authorization is needed.
 * Signed upload URLs work the same way with their own scope.
 */

/** Mints the token for `bucket/path` valid for `expiresIn` seconds. */
export async function signObjectToken(bucketId: string, objectName: string, expiresIn: number, keys: StorageKeys, transformations?: string): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ url: `${bucketId}/${objectName}`, ...(transformations ? { transformations } : {}) })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setIssuedAt(now)
    .setExpirationTime(now + expiresIn)
    .sign(keys.secret);
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
export async function verifyObjectToken(token: string | undefined, bucketId: string, objectName: string, keys: StorageKeys): Promise<{ transformations: string | null }> {
  const payload = await verifiedPayload(token, bucketId, objectName, keys);
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
export async function signUploadToken(bucketId: string, objectName: string, grant: UploadGrant, keys: StorageKeys): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ url: `${bucketId}/${objectName}`, owner: grant.owner ?? undefined, upsert: grant.upsert, scope: UPLOAD_SCOPE })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setIssuedAt(now)
    .setExpirationTime(now + SIGNED_UPLOAD_TTL_SECONDS)
    .sign(keys.secret);
}

/** The path of a signed upload URL, as Storage answers it. */
export function signedUploadPath(bucketId: string, objectName: string, token: string): string {
  return `/object/upload/sign/${bucketId}/${objectName}?token=${token}`;
}

/** Checks an upload token against its path (errors as for downloads) and returns its grant. */
export async function verifyUploadToken(token: string | undefined, bucketId: string, objectName: string, keys: StorageKeys): Promise<UploadGrant> {
  const payload = await verifiedPayload(token, bucketId, objectName, keys);
  if (payload.scope !== UPLOAD_SCOPE) throw storageErrors.invalidSignature();
  return { owner: typeof payload.owner === "string" ? payload.owner : null, upsert: payload.upsert === true };
}

async function verifiedPayload(token: string | undefined, bucketId: string, objectName: string, keys: StorageKeys) {
  if (!token) throw storageErrors.missingParameter("token");
  const payload = await verifyToken(token, keys).catch((error: unknown) => {
    throw storageErrors.invalidJwt(error instanceof Error ? error.message : "Invalid JWT");
  });
  if (payload.url !== `${bucketId}/${objectName}`) throw storageErrors.invalidSignature();
  return payload;
}
