import type { Queryable } from "./database.ts";

/**
 * SQL on storage.objects. Each function runs on whatever it is given: inside `asCaller` the
 * project's RLS policies decide what it sees and may change; on the pool it runs with the
 * service's own rights (only for lookups Storage also does as a superuser).
 */

/** The system metadata Storage keeps in `storage.objects.metadata`. */
export interface ObjectMetadata {
  eTag: string;
  size: number;
  mimetype: string;
  cacheControl: string;
  lastModified: string;
  contentLength: number;
  httpStatusCode: number;
  contentEncoding?: string;
}

/** A row of storage.objects as this service reads it. */
export interface ObjectRow {
  id: string;
  bucket_id: string;
  name: string;
  owner: string | null;
  owner_id: string | null;
  version: string | null;
  metadata: ObjectMetadata | null;
  user_metadata: Record<string, unknown> | null;
  created_at: Date;
  updated_at: Date;
  last_accessed_at: Date;
}

/** What an upload writes. */
export interface NewObject {
  id: string;
  bucketId: string;
  name: string;
  /** The uploader's `sub`; `owner` is only set when it is a uuid, as the column's type demands. */
  ownerId: string | null;
  version: string;
  metadata: ObjectMetadata;
  userMetadata: Record<string, unknown> | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Finds one object by name; null when it does not exist or the caller may not see it. */
export async function findObject(tx: Queryable, bucketId: string, name: string): Promise<ObjectRow | null> {
  const [row] = await tx<ObjectRow[]>`
    select id, bucket_id, name, owner, owner_id, version, metadata, user_metadata, created_at, updated_at, last_accessed_at
    from storage.objects where bucket_id = ${bucketId} and name = ${name}`;
  return row ?? null;
}

/** The names among `names` that exist in the bucket and the caller may see. */
export async function visibleNames(tx: Queryable, bucketId: string, names: string[]): Promise<Set<string>> {
  const rows = await tx<{ name: string }[]>`
    select name from storage.objects where bucket_id = ${bucketId} and name = any(${names}::text[])`;
  return new Set(rows.map((row) => row.name));
}

/** The id and version of an object, read with the service's rights and locked until commit. */
export async function lockCurrentObject(tx: Queryable, bucketId: string, name: string): Promise<{ id: string; version: string | null } | null> {
  const [row] = await tx<{ id: string; version: string | null }[]>`
    select id, version from storage.objects where bucket_id = ${bucketId} and name = ${name} for update`;
  return row ?? null;
}

/**
 * Inserts an object. With `upsert` an existing row is replaced in place (same id), which Postgres
 * lets through only when the caller's INSERT, SELECT and UPDATE policies all agree, as on Storage.
 * No RETURNING: it would demand a SELECT policy for a plain upload, which Storage does not.
 */
export async function writeObject(tx: Queryable, object: NewObject, upsert: boolean): Promise<void> {
  const owner = object.ownerId && UUID.test(object.ownerId) ? object.ownerId : null;
  const metadata = JSON.stringify(object.metadata);
  const userMetadata = object.userMetadata === null ? null : JSON.stringify(object.userMetadata);
  if (upsert) {
    await tx`
      insert into storage.objects (id, bucket_id, name, owner, owner_id, version, metadata, user_metadata)
      values (${object.id}, ${object.bucketId}, ${object.name}, ${owner}, ${object.ownerId}, ${object.version},
              ${metadata}::text::jsonb, ${userMetadata}::text::jsonb)
      on conflict (bucket_id, name) do update set
        owner = excluded.owner, owner_id = excluded.owner_id, version = excluded.version,
        metadata = excluded.metadata, user_metadata = excluded.user_metadata,
        updated_at = now(), last_accessed_at = now()`;
  } else {
    await tx`
      insert into storage.objects (id, bucket_id, name, owner, owner_id, version, metadata, user_metadata)
      values (${object.id}, ${object.bucketId}, ${object.name}, ${owner}, ${object.ownerId}, ${object.version},
              ${metadata}::text::jsonb, ${userMetadata}::text::jsonb)`;
  }
}

/** Deletes the named objects the caller may delete; returns the deleted rows. */
export async function deleteObjects(tx: Queryable, bucketId: string, names: string[]): Promise<ObjectRow[]> {
  return tx<ObjectRow[]>`
    delete from storage.objects where bucket_id = ${bucketId} and name = any(${names}::text[])
    returning id, bucket_id, name, owner, owner_id, version, metadata, user_metadata, created_at, updated_at, last_accessed_at`;
}

/** Deletes every object of a bucket the caller may delete; returns their versions. */
export async function deleteAllObjects(tx: Queryable, bucketId: string): Promise<string[]> {
  const rows = await tx<{ version: string | null }[]>`
    delete from storage.objects where bucket_id = ${bucketId} returning version`;
  return rows.flatMap((row) => (row.version ? [row.version] : []));
}

/** Renames (and possibly re-buckets) an object; false when the caller can not see or update it. */
export async function renameObject(
  tx: Queryable,
  from: { bucketId: string; name: string },
  to: { bucketId: string; name: string },
): Promise<string | null> {
  const rows = await tx<{ id: string }[]>`
    update storage.objects set bucket_id = ${to.bucketId}, name = ${to.name}, updated_at = now()
    where bucket_id = ${from.bucketId} and name = ${from.name}
    returning id`;
  return rows[0]?.id ?? null;
}

/** Whether a bucket holds any object at all (the service's view, not the caller's). */
export async function bucketHasObjects(tx: Queryable, bucketId: string): Promise<boolean> {
  const [row] = await tx<{ found: boolean }[]>`
    select exists (select 1 from storage.objects where bucket_id = ${bucketId}) as found`;
  return row.found;
}

/** Options of a folder listing, already validated. */
export interface ListOptions {
  /** Folder to list, "" for the root or ending in "/". */
  prefix: string;
  limit: number;
  offset: number;
  sortColumn: "name" | "created_at" | "updated_at" | "last_accessed_at";
  sortOrder: "asc" | "desc";
  search: string;
}

/** One entry of a folder listing; folders have `id: null` and no timestamps or metadata. */
export interface ListEntry {
  name: string;
  id: string | null;
  updated_at: Date | null;
  created_at: Date | null;
  last_accessed_at: Date | null;
  metadata: ObjectMetadata | null;
}

/**
 * Lists one folder level: objects directly under `prefix` and the sub-folders that contain some
 * object, folders first (by name), then files in the requested order, then `limit`/`offset` over
 * the whole, which is how Storage's `storage.search` answers. `search` filters names that start
 * with it, case-insensitively. Only objects the caller may SELECT count.
 */
export async function listFolder(tx: Queryable, bucketId: string, options: ListOptions): Promise<ListEntry[]> {
  const { prefix } = options;
  const searchPattern = `${options.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const direction = options.sortOrder === "desc" ? tx`desc` : tx`asc`;
  const fileOrder = tx(options.sortColumn);
  return tx<ListEntry[]>`
    with matched as (
      select id, updated_at, created_at, last_accessed_at, metadata, substr(name, char_length(${prefix}) + 1) as rest
      from storage.objects
      where bucket_id = ${bucketId} and starts_with(name, ${prefix})
    ),
    entries as (
      select distinct 0 as kind, split_part(rest, '/', 1) as name,
        null::uuid as id, null::timestamptz as updated_at, null::timestamptz as created_at,
        null::timestamptz as last_accessed_at, null::jsonb as metadata
      from matched where strpos(rest, '/') > 0 and rest ilike ${searchPattern}
      union all
      select 1, rest, id, updated_at, created_at, last_accessed_at, metadata
      from matched where strpos(rest, '/') = 0 and rest ilike ${searchPattern}
    )
    select name, id, updated_at, created_at, last_accessed_at, metadata
    from entries
    order by kind, case when kind = 0 then name end ${direction}, ${fileOrder} ${direction}, name ${direction}
    limit ${options.limit} offset ${options.offset}`;
}

/** One entry of a list-v2 page: an object, or a folder (`id` null, name ending in "/"). */
export interface ListV2Entry {
  id: string | null;
  name: string;
  metadata: ObjectMetadata | null;
  updated_at: Date | null;
  created_at: Date | null;
  last_accessed_at: Date | null;
}

/**
 * A page of objects under `prefix` after the cursor `startAfter`, in byte order of name (Storage's
 * `COLLATE "C"`), as the caller may see them. With `delimiter`, everything below the next "/" is
 * one folder entry, as Storage's search_v2 answers.
 */
export async function listPage(tx: Queryable, bucketId: string, options: { prefix: string; startAfter: string; limit: number; delimiter: boolean; descending: boolean }): Promise<ListV2Entry[]> {
  const pattern = `${options.prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const order = options.descending ? tx`desc` : tx`asc`;
  const after = options.descending ? tx`<` : tx`>`;
  const noCursor = options.startAfter === "";
  if (!options.delimiter) {
    return tx<ListV2Entry[]>`
      select id, name, metadata, updated_at, created_at, last_accessed_at from storage.objects
      where bucket_id = ${bucketId} and name like ${pattern}
        and (${noCursor} or name collate "C" ${after} ${options.startAfter})
      order by name collate "C" ${order} limit ${options.limit}`;
  }
  const offset = options.prefix.length;
  return tx<ListV2Entry[]>`
    with keyed as (
      select id, name, metadata, updated_at, created_at, last_accessed_at,
        case when strpos(substr(name, ${offset} + 1), '/') > 0
          then left(name, ${offset} + strpos(substr(name, ${offset} + 1), '/')) else name end as key
      from storage.objects where bucket_id = ${bucketId} and name like ${pattern}
    )
    select case when bool_and(key = name) then (array_agg(id))[1] end as id, key as name,
      case when bool_and(key = name) then (array_agg(metadata))[1] end as metadata,
      case when bool_and(key = name) then max(updated_at) end as updated_at,
      case when bool_and(key = name) then max(created_at) end as created_at,
      case when bool_and(key = name) then max(last_accessed_at) end as last_accessed_at
    from keyed
    where ${noCursor} or key collate "C" ${after} ${options.startAfter}
    group by key order by key collate "C" ${order} limit ${options.limit}`;
}
