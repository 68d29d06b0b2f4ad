import type { BucketRow } from "./buckets-repository.ts";
import { storageErrors } from "./errors.ts";
import type { SizeLimit } from "./object-store.ts";
import { parseBucketSize } from "./sizes.ts";

/**
 * The limits a bucket puts on uploads. The global limit (`[storage] file_size_limit`) always
 * applies; a bucket can only lower it. The error is Storage's, word for word, whichever limit
 * was hit.
 */
export function uploadLimit(bucket: Pick<BucketRow, "file_size_limit">, globalLimit: number): SizeLimit {
  const bucketLimit = bucket.file_size_limit;
  if (bucketLimit !== null && bucketLimit < globalLimit) {
    return {
      bytes: bucketLimit,
      failure: () => storageErrors.entityTooLarge("The object exceeded the maximum allowed size"),
    };
  }
  return {
    bytes: globalLimit,
    failure: () => storageErrors.entityTooLarge("The object exceeded the maximum allowed size"),
  };
}

/**
 * Refuses a content type the bucket does not allow. Entries match exactly or by family
 * ("image/*"), ignoring parameters such as "; charset=utf-8" and case.
 */
export function assertMimeTypeAllowed(bucket: Pick<BucketRow, "allowed_mime_types">, contentType: string): void {
  const allowed = bucket.allowed_mime_types;
  if (!allowed || allowed.length === 0) return;
  const mimeType = contentType.split(";")[0].trim().toLowerCase();
  const ok = allowed.some((entry) => {
    const pattern = entry.split(";")[0].trim().toLowerCase();
    return pattern === mimeType || (pattern.endsWith("/*") && mimeType.startsWith(pattern.slice(0, -1)));
  });
  if (!ok) throw storageErrors.invalidMimeType(contentType);
}

/**
 * A bucket's `file_size_limit` from an API body: bytes as a number, or Storage's size strings
 * ("20MB", decimal units). It may not exceed the global limit, as on Storage. Zero means "no
 * limit of its own" (stored as null), which is how the dashboard clears the setting.
 */
export function bucketSizeLimit(value: number | string | null | undefined, globalLimit: number): number | null | undefined {
  if (value === undefined || value === null) return value;
  const bytes = typeof value === "number" ? value : parseBucketSize(value);
  if (bytes === null) throw storageErrors.invalidRequest("Invalid file size format, hint: use 20GB / 20MB / 30KB / 3B");
  if (bytes > globalLimit) {
    throw storageErrors.entityTooLarge("The object exceeded the maximum allowed size");
  }
  return bytes === 0 ? null : bytes;
}
