/**
 * Storage's error model. The Storage API answers every failure that is not an internal error with
 * HTTP 400 and puts the real meaning in the body's `statusCode` (a string), `code` and `error`;
 * storage-js reads those fields, so clients see `status: 400, statusCode: "404"` just as they do
 * against a real Storage server. Only internal failures use HTTP 500.
 */

/** Storage's machine-readable error codes (the subset this service can produce). */
export type StorageErrorCode =
  | "NoSuchBucket"
  | "NoSuchKey"
  | "InvalidJWT"
  | "InvalidRequest"
  | "EntityTooLarge"
  | "InternalError"
  | "ResourceAlreadyExists"
  | "ResourceNotEmpty"
  | "InvalidBucketName"
  | "InvalidKey"
  | "InvalidMimeType"
  | "InvalidSignature"
  | "AccessDenied"
  | "MissingParameter"
  | "InvalidParameter"
  | "InvalidRange";

/** The JSON body of a Storage error response. */
export interface StorageErrorBody {
  statusCode: string;
  code: StorageErrorCode;
  error: string;
  message: string;
}

/** A failure a handler throws; the app's error handler renders it with `toResponse`. */
export class StorageFailure extends Error {
  constructor(
    readonly code: StorageErrorCode,
    /** The logical HTTP status that goes into the body's `statusCode`. */
    readonly logicalStatus: number,
    message: string,
    /** The legacy short text in `error`; Storage falls back to the code when it has none. */
    readonly legacyError: string = code,
    /** The HTTP status when it is not Storage's usual 400/500 (unknown routes answer a real 404). */
    readonly httpStatus: number = logicalStatus >= 500 ? 500 : 400,
  ) {
    super(message);
    this.name = "StorageFailure";
  }

  /** The body Storage would send. */
  body(): StorageErrorBody {
    return { statusCode: String(this.logicalStatus), code: this.code, error: this.legacyError, message: this.message };
  }

  /** HTTP 400 for every logical status except 500, which is Storage's (and storage-js's) contract. */
  toResponse(): Response {
    return Response.json(this.body(), { status: this.httpStatus });
  }
}

/** Factories for the errors this service raises, worded as Storage words them. */
export const storageErrors = {
  noSuchBucket: () => new StorageFailure("NoSuchBucket", 404, "Bucket not found", "Bucket not found"),
  noSuchKey: () => new StorageFailure("NoSuchKey", 404, "Object not found", "not_found"),
  accessDenied: (message = "Access denied") => new StorageFailure("AccessDenied", 403, message, "Unauthorized"),
  rlsViolation: () => storageErrors.accessDenied("new row violates row-level security policy"),
  invalidJwt: (message = "Invalid JWT") => new StorageFailure("InvalidJWT", 400, message),
  invalidSignature: (message = "Invalid signature") => new StorageFailure("InvalidSignature", 400, message),
  alreadyExists: () => new StorageFailure("ResourceAlreadyExists", 409, "The resource already exists", "Duplicate"),
  bucketNotEmpty: () => new StorageFailure("ResourceNotEmpty", 409, "The bucket you tried to delete is not empty"),
  entityTooLarge: (message: string) => new StorageFailure("EntityTooLarge", 413, message, "Payload too large"),
  invalidMimeType: (mimeType: string) =>
    new StorageFailure("InvalidMimeType", 415, `mime type ${mimeType} is not supported`, "invalid_mime_type"),
  invalidBucketName: () => new StorageFailure("InvalidBucketName", 400, "Bucket name invalid", "Invalid Input"),
  invalidKey: (key: string) => new StorageFailure("InvalidKey", 400, `Invalid key: ${key}`),
  invalidRequest: (message: string) => new StorageFailure("InvalidRequest", 400, message),
  missingParameter: (name: string) => new StorageFailure("MissingParameter", 400, `Missing Required Parameter ${name}`),
  invalidParameter: (name: string, message?: string) =>
    new StorageFailure("InvalidParameter", 400, message ?? `Invalid Parameter ${name}`),
  internal: () => new StorageFailure("InternalError", 500, "Internal server error", "Internal"),
  // Storage's web framework answers unknown routes itself, with a plain HTTP 404.
  notFoundRoute: (method: string, path: string) =>
    new StorageFailure("InvalidRequest", 404, `Route ${method}:${path} not found`, "Not Found", 404),
};

/** Shape of the errors thrown by the `postgres` driver that this service cares about. */
interface PostgresErrorLike {
  code?: unknown;
  constraint_name?: unknown;
}

/**
 * Translates a database error into Storage's error, or returns null when it is unexpected (the
 * caller then logs it and answers 500). RLS rejections come back as SQLSTATE 42501; the unique
 * index on (bucket_id, name) as 23505; a missing bucket as a foreign-key violation.
 */
export function fromDatabaseError(error: unknown): StorageFailure | null {
  if (error instanceof StorageFailure) return error;
  if (typeof error !== "object" || error === null) return null;
  const { code, constraint_name } = error as PostgresErrorLike;
  switch (code) {
    case "42501":
      return storageErrors.rlsViolation();
    case "23505":
      return storageErrors.alreadyExists();
    case "23503":
      return constraint_name === "objects_bucketId_fkey" || constraint_name === "objects_bucket_id_fkey"
        ? storageErrors.noSuchBucket()
        : storageErrors.invalidRequest("The related resource does not exist");
    case "22P02":
    case "22023":
    case "22001":
    case "23502":
    case "23514":
      return storageErrors.invalidRequest("Invalid input");
    default:
      return null;
  }
}
