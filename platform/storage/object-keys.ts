import { storageErrors } from "./errors.ts";

/**
 * Names as the Storage API accepts them. Bucket names use Storage's character set; object names
 * are free-form keys (any characters but control characters, at most 1024 bytes), since bytes on
 * disk are addressed by version id and never by name, so a name can not reach outside the store.
 */

const BUCKET_NAME = /^[\w!\-.*'() &$@=;:+,?]{1,100}$/;
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;
const MAX_KEY_BYTES = 1024;

/** Throws InvalidBucketName unless `name` is a bucket name Storage would accept. */
export function assertBucketName(name: string): void {
  if (!BUCKET_NAME.test(name)) throw storageErrors.invalidBucketName();
}

/** Throws InvalidKey unless `key` is an object name Storage would accept. */
export function assertObjectKey(key: string): void {
  if (!key || CONTROL_CHARACTERS.test(key) || Buffer.byteLength(key) > MAX_KEY_BYTES) throw storageErrors.invalidKey(key);
}

/**
 * A bucket id read from a path, for a lookup. Postgres cannot even compare text holding a NUL
 * (22021), and no bucket can be named so (assertBucketName), so such an id is refused as invalid
 * instead of failing in SQL.
 */
export function pathBucketId(id: string): string {
  if (id.includes("\u0000")) throw storageErrors.invalidBucketName();
  return id;
}

/**
 * Splits an object route's pathname into bucket and object name. `skip` is the number of leading
 * segments that name the route ("object", "sign", ...). Segments are percent-decoded one by one so
 * an encoded "/" inside a segment stays part of the name, as it does on S3.
 */
export function objectLocation(pathname: string, skip: number): { bucketId: string; objectName: string } {
  const segments = pathname.split("/").slice(1 + skip).map(decodeSegment);
  const [bucketId = "", ...rest] = segments;
  const objectName = rest.join("/");
  // No object can be named with a NUL (assertObjectKey), and Postgres could not look one up.
  if (objectName.includes("\u0000")) throw storageErrors.invalidKey(objectName);
  return { bucketId: pathBucketId(bucketId), objectName };
}

/** The raw (still percent-encoded) path segments after the leading slash. */
export function pathSegments(pathname: string): string[] {
  return pathname.split("/").slice(1);
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw storageErrors.invalidKey(segment);
  }
}
