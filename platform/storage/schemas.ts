import { z } from "zod";
import { storageErrors } from "./errors.ts";
import { transformOptions } from "./image-transform.ts";

/**
 * Request bodies of the Storage API as storage-js sends them. Unknown fields are ignored (clients
 * send `type`, `versioning_status`, `transform`... that this service does not act on).
 */

/** `expiresIn` of a signed URL: whole seconds, at least one. Fractions are truncated. */
const expiresIn = z.number().min(1).transform(Math.floor);

/** POST /bucket */
export const createBucketBody = z.object({
  id: z.string().optional(),
  name: z.string(),
  public: z.boolean().nullish(),
  file_size_limit: z.union([z.number().int().min(0), z.string(), z.null()]).optional(),
  allowed_mime_types: z.array(z.string()).nullish(),
});

/** PUT /bucket/{id} */
export const updateBucketBody = z.object({
  public: z.boolean().nullish(),
  file_size_limit: z.union([z.number().int().min(0), z.string(), z.null()]).optional(),
  allowed_mime_types: z.array(z.string()).nullish(),
});

/** Query string of GET /bucket */
export const listBucketsQuery = z.object({
  limit: z.coerce.number().int().min(0).optional(),
  offset: z.coerce.number().int().min(0).default(0),
  sortColumn: z.enum(["id", "name", "created_at", "updated_at"]).default("name"),
  sortOrder: z.enum(["asc", "desc"]).default("asc"),
  search: z.string().default(""),
});

/** POST /object/sign/{bucket}/{path} (`transform` signs an image URL) */
export const signBody = z.object({ expiresIn, transform: transformOptions.optional() });

/** POST /object/list-v2/{bucket} (storage-js `listV2`): cursor-based listing, optionally one folder level. */
export const listV2Body = z.object({
  prefix: z.string().default(""),
  limit: z.number().int().min(1).optional(),
  cursor: z.string().optional(),
  with_delimiter: z.boolean().optional(),
  sortBy: z
    .object({ column: z.enum(["name", "updated_at", "created_at"]), order: z.enum(["asc", "desc"]).optional() })
    .optional(),
});

/** POST /object/sign/{bucket} */
export const signManyBody = z.object({ expiresIn, paths: z.array(z.string()).min(1).max(1000) });

/** DELETE /object/{bucket} */
export const deleteObjectsBody = z.object({ prefixes: z.array(z.string()).min(1).max(1000) });

/** POST /object/list/{bucket} */
export const listObjectsBody = z.object({
  prefix: z.string().default(""),
  limit: z.number().int().min(0).default(100),
  offset: z.number().int().min(0).default(0),
  sortBy: z
    .object({
      column: z.enum(["name", "created_at", "updated_at", "last_accessed_at"]).default("name"),
      order: z
        .string()
        .transform((order) => order.toLowerCase())
        .pipe(z.enum(["asc", "desc"]))
        .default("asc"),
    })
    .default({ column: "name", order: "asc" }),
  search: z.string().default(""),
});

/** POST /object/move and /object/copy */
export const moveBody = z.object({
  bucketId: z.string(),
  sourceKey: z.string(),
  destinationKey: z.string(),
  destinationBucket: z.string().nullish(),
});

/**
 * Reads a JSON body and validates it. A malformed body is InvalidRequest with the first problem
 * named the way Storage's validator names it ("body/expiresIn ..."), never a 500.
 */
export async function readJson<T extends z.ZodType>(request: Request, schema: T): Promise<z.output<T>> {
  let body: unknown = {};
  const text = await request.text().catch(() => "");
  if (text.trim()) {
    try {
      body = JSON.parse(text);
    } catch {
      throw storageErrors.invalidRequest("Body is not valid JSON");
    }
  }
  return validate(schema, body, "body");
}

/** Validates a value (a parsed body or a query string object). */
export function validate<T extends z.ZodType>(schema: T, value: unknown, where: "body" | "querystring"): z.output<T> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const path = [where, ...issue.path.map(String)].join("/");
  throw storageErrors.invalidRequest(`${path} ${issue.message}`);
}
