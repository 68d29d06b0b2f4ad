-- The storage schema as the Supabase Storage API keeps it. Access to objects is decided by RLS
-- policies on storage.objects, which projects write in their migrations; none exist by default.

create schema storage authorization supabase_storage_admin;
grant usage on schema storage to postgres, anon, authenticated, service_role;

set role supabase_storage_admin;

create table storage.buckets (
  id text primary key,
  name text not null,
  owner uuid,
  owner_id text,
  created_at timestamptz default now(),
  updated_at timestamptz default now(),
  public boolean default false,
  avif_autodetection boolean default false,
  file_size_limit bigint,
  allowed_mime_types text[]
);
create unique index bname on storage.buckets using btree (name);

create table storage.objects (
  id uuid primary key default gen_random_uuid(),
  bucket_id text references storage.buckets (id),
  name text,
  owner uuid,
  owner_id text,
  created_at timestamptz default now(),
  updated_at timestamptz default now(),
  last_accessed_at timestamptz default now(),
  metadata jsonb,
  path_tokens text[] generated always as (string_to_array(name, '/')) stored,
  version text,
  user_metadata jsonb
);
create unique index bucketid_objname on storage.objects using btree (bucket_id, name);
create index name_prefix_search on storage.objects (name text_pattern_ops);

alter table storage.buckets enable row level security;
alter table storage.objects enable row level security;

create table storage.migrations (
  id integer primary key,
  name varchar(100) unique not null,
  hash varchar(40) not null,
  executed_at timestamp default current_timestamp
);

/** The folder parts of an object name: 'a/b/c.png' gives {a,b}. */
create function storage.foldername(name text) returns text[]
language plpgsql immutable as $$
declare
  parts text[];
begin
  select string_to_array(name, '/') into parts;
  return parts[1:array_length(parts, 1) - 1];
end $$;

/** The last part of an object name: 'a/b/c.png' gives 'c.png'. */
create function storage.filename(name text) returns text
language plpgsql immutable as $$
declare
  parts text[];
begin
  select string_to_array(name, '/') into parts;
  return parts[array_length(parts, 1)];
end $$;

/** The extension of an object name: 'a/b/c.png' gives 'png'. */
create function storage.extension(name text) returns text
language plpgsql immutable as $$
declare
  parts text[];
  filename text;
begin
  select string_to_array(name, '/') into parts;
  select parts[array_length(parts, 1)] into filename;
  return reverse(split_part(reverse(filename), '.', 1));
end $$;

reset role;

grant all on storage.buckets, storage.objects to anon, authenticated, service_role, postgres;
grant all on storage.migrations to postgres;
grant execute on all functions in schema storage to anon, authenticated, service_role, postgres;
alter default privileges for role supabase_storage_admin in schema storage
  grant all on tables to postgres, anon, authenticated, service_role;
