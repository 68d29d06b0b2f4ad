import type { Queryable } from "./database.ts";

/** A bucket as the Storage API returns it. */
export interface BucketRow {
  id: string;
  name: string;
  owner: string | null;
  public: boolean;
  file_size_limit: number | null;
  allowed_mime_types: string[] | null;
  created_at: Date;
  updated_at: Date;
}

/** Settings a create or update may change. `undefined` leaves a setting as it is. */
export interface BucketSettings {
  public?: boolean;
  fileSizeLimit?: number | null;
  allowedMimeTypes?: string[] | null;
}

/** Options of a bucket listing, already validated. */
export interface BucketListOptions {
  limit?: number;
  offset: number;
  sortColumn: "id" | "name" | "created_at" | "updated_at";
  sortOrder: "asc" | "desc";
  search: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Finds a bucket; null when it does not exist (or, inside `asCaller`, the caller may not see it). */
export async function findBucket(tx: Queryable, id: string): Promise<BucketRow | null> {
  const [row] = await tx<BucketRow[]>`
    select id, name, owner, public, file_size_limit::float8 as file_size_limit, allowed_mime_types, created_at, updated_at
    from storage.buckets where id = ${id}`;
  return row ?? null;
}

/** Lists the buckets the caller may see. */
export async function listBuckets(tx: Queryable, options: BucketListOptions): Promise<BucketRow[]> {
  const direction = options.sortOrder === "desc" ? tx`desc` : tx`asc`;
  const searchPattern = `%${options.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  return tx<BucketRow[]>`
    select id, name, owner, public, file_size_limit::float8 as file_size_limit, allowed_mime_types, created_at, updated_at
    from storage.buckets
    where name ilike ${searchPattern}
    order by ${tx(options.sortColumn)} ${direction}, id
    limit ${options.limit ?? null} offset ${options.offset}`;
}

/** Creates a bucket as the caller (an INSERT policy on storage.buckets, or service_role, is needed). */
export async function insertBucket(tx: Queryable, id: string, name: string, ownerId: string | null, settings: BucketSettings): Promise<void> {
  const owner = ownerId && UUID.test(ownerId) ? ownerId : null;
  await tx`
    insert into storage.buckets (id, name, owner, owner_id, public, file_size_limit, allowed_mime_types)
    values (${id}, ${name}, ${owner}, ${ownerId}, ${settings.public ?? false}, ${settings.fileSizeLimit ?? null},
            ${settings.allowedMimeTypes ?? null}::text[])`;
}

/** Updates the given settings; false when the caller can not see or update the bucket. */
export async function updateBucket(tx: Queryable, id: string, settings: BucketSettings): Promise<boolean> {
  const keep = (value: unknown) => value === undefined;
  const rows = await tx`
    update storage.buckets set
      public = case when ${keep(settings.public)} then public else ${settings.public ?? null}::boolean end,
      file_size_limit = case when ${keep(settings.fileSizeLimit)} then file_size_limit else ${settings.fileSizeLimit ?? null}::bigint end,
      allowed_mime_types = case when ${keep(settings.allowedMimeTypes)} then allowed_mime_types
                                else ${settings.allowedMimeTypes ?? null}::text[] end,
      updated_at = now()
    where id = ${id}
    returning id`;
  return rows.length > 0;
}

/** Deletes a bucket; false when the caller can not see or delete it. */
export async function deleteBucket(tx: Queryable, id: string): Promise<boolean> {
  const rows = await tx`delete from storage.buckets where id = ${id} returning id`;
  return rows.length > 0;
}
