-- Workflow service, part 4: webhook subscriptions, the spec's "configured in the workflow editor"
-- list of URLs told about every completed execution of a workflow (`workflow.execution.completed`).
--
-- Managed through the data API under row-level security: members of the workspace read them,
-- editors create, change and delete them. The signing secret is write-only: a client sets it in
-- `secret` (or clears it with an empty string), the row keeps only `has_secret`, and the secret
-- itself is stored encrypted with the environment-variable key (docs/workflows.md, "Environment
-- variables and their key") in a table no API role can read. Only the delivery worker gets it
-- back, through a service-role function (next migration).
--
-- URLs are checked for form here (an absolute http(s) URL without credentials); whether the host
-- is a public address can only be judged after DNS, so the outbound guard judges it on every
-- delivery attempt, exactly as it does for the API block.

create table public.webhook_subscriptions (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null,
  workflow_id uuid not null,
  url text not null,
  secret text,
  has_secret boolean not null default false,
  include_final_output boolean not null default false,
  include_trace_spans boolean not null default false,
  include_rate_limits boolean not null default false,
  include_usage_data boolean not null default false,
  level_filter public.workflow_log_level[] not null default '{info,error}',
  trigger_filter public.workflow_trigger[] not null default '{api,webhook,schedule,manual,chat}',
  active boolean not null default true,
  disable_after_dead_deliveries integer not null default 10,
  disable_after_dead_minutes integer not null default 1440,
  consecutive_dead_deliveries integer not null default 0,
  dead_since timestamptz,
  disabled_at timestamptz,
  disabled_reason text,
  created_by uuid default auth.uid() references auth.users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  foreign key (workspace_id, workflow_id) references public.workflows (workspace_id, id) on delete cascade,
  constraint webhook_subscriptions_disable_after_range check (disable_after_dead_deliveries between 1 and 1000),
  constraint webhook_subscriptions_disable_after_minutes_range check (disable_after_dead_minutes between 0 and 10080)
);
comment on table public.webhook_subscriptions is 'Where a workflow''s completed executions are announced (workflow.execution.completed). Members read, editors write; the secret is write-only.';
comment on column public.webhook_subscriptions.workspace_id is 'The workflow''s workspace, filled in from the workflow (row-level security reads it).';
comment on column public.webhook_subscriptions.workflow_id is 'The workflow whose executions are announced.';
comment on column public.webhook_subscriptions.url is 'The receiving endpoint: an absolute http(s) URL without credentials, at most 2048 characters. Whether its host is public is checked on every delivery.';
comment on column public.webhook_subscriptions.secret is 'Write-only: set it (8 to 256 characters) to have deliveries signed, or to an empty string to stop signing. Always reads as null; see has_secret.';
comment on column public.webhook_subscriptions.has_secret is 'Whether deliveries are signed (a secret is set). Read-only.';
comment on column public.webhook_subscriptions.include_final_output is 'Add data.finalOutput (the run''s output) to deliveries.';
comment on column public.webhook_subscriptions.include_trace_spans is 'Add data.traceSpans to deliveries.';
comment on column public.webhook_subscriptions.include_rate_limits is 'Add data.rateLimits: the paying account''s execution rate limits when the delivery is made.';
comment on column public.webhook_subscriptions.include_usage_data is 'Add data.usage: the paying account''s usage of the period when the delivery is made.';
comment on column public.webhook_subscriptions.level_filter is 'Levels announced (info, error).';
comment on column public.webhook_subscriptions.trigger_filter is 'Triggers announced (api, webhook, schedule, manual, chat).';
comment on column public.webhook_subscriptions.active is 'Deliveries are made only while active; pending ones fail when it is switched off. Switched off by the service after disable_after_dead_deliveries dead deliveries in a row; setting it true again clears the count and the reason.';
comment on column public.webhook_subscriptions.disable_after_dead_deliveries is 'How many dead deliveries in a row (each failed for good) switch the subscription off: 1 to 1000, default 10.';
comment on column public.webhook_subscriptions.disable_after_dead_minutes is 'and for at least how long they must have been dying (since the first of them died): 0 to 10,080 minutes, default 1,440 (a day), so a short outage of a busy receiver does not switch it off.';
comment on column public.webhook_subscriptions.consecutive_dead_deliveries is 'Dead deliveries since the last one that arrived. Read-only.';
comment on column public.webhook_subscriptions.dead_since is 'When the first of those dead deliveries died (null when the last delivery arrived). Read-only.';
comment on column public.webhook_subscriptions.disabled_at is 'When the service switched it off for its dead deliveries (null otherwise). Read-only.';
comment on column public.webhook_subscriptions.disabled_reason is 'Why the service switched it off: the count and the last dead delivery''s error. Read-only.';
comment on column public.webhook_subscriptions.created_by is 'Who created it.';
comment on column public.webhook_subscriptions.created_at is 'When it was created.';
comment on column public.webhook_subscriptions.updated_at is 'When it last changed.';
comment on column public.webhook_subscriptions.id is 'Subscription id.';

create index webhook_subscriptions_workflow_active_idx on public.webhook_subscriptions (workflow_id) where active;
create index webhook_subscriptions_workspace_id_idx on public.webhook_subscriptions (workspace_id);

create table workflows_private.webhook_secrets (
  -- Deferred: the row is written by the subscription's BEFORE trigger, ahead of the subscription.
  subscription_id uuid primary key references public.webhook_subscriptions (id) on delete cascade deferrable initially deferred,
  secret_encrypted bytea not null
);
comment on table workflows_private.webhook_secrets is 'Signing secrets of webhook subscriptions, encrypted with the environment key. No API role has any privilege on it.';
comment on column workflows_private.webhook_secrets.subscription_id is 'The subscription.';
comment on column workflows_private.webhook_secrets.secret_encrypted is 'pgp_sym_encrypt(secret, environment_key()), AES-256.';

/**
 * Trigger, before a subscription is written: takes its workspace from the workflow (refusing a
 * workflow the writer may not edit, whether or not it exists, with 42501), checks the URL's form,
 * and moves a secret given in `secret` into webhook_secrets (encrypted; an empty string removes it),
 * so the row never holds it and `has_secret` says whether one is set. Keeps the dead-delivery
 * record (count, when and why switched off) as the service wrote it, and clears it when a writer
 * switches the subscription back on.
 */
create function workflows_private.prepare_webhook_subscription()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  if tg_op = 'INSERT' or new.workflow_id is distinct from old.workflow_id then
    select w.workspace_id into new.workspace_id from public.workflows w where w.id = new.workflow_id;
    if new.workspace_id is null
      or ((select auth.role()) is distinct from 'service_role' and not workflows_private.has_workspace_role(new.workspace_id, 'editor')) then
      raise exception 'Only an editor of the workflow''s workspace may subscribe to workflow %', new.workflow_id using errcode = '42501';
    end if;
  else
    new.workspace_id := old.workspace_id;
  end if;

  if new.url is null or char_length(new.url) > 2048 or new.url !~* '^https?://[^/?#@[:space:][:cntrl:]]+([/?#][^[:space:][:cntrl:]]*)?$' then
    raise exception 'The webhook URL must be an absolute http or https URL without spaces, user name or password, at most 2048 characters'
      using errcode = '23514';
  end if;

  new.has_secret := case when tg_op = 'INSERT' then false else old.has_secret end;
  if new.secret = '' then
    delete from workflows_private.webhook_secrets s where s.subscription_id = new.id;
    new.has_secret := false;
  elsif new.secret is not null then
    if char_length(new.secret) not between 8 and 256 or new.secret ~ '[[:cntrl:]]' then
      raise exception 'A webhook secret is 8 to 256 characters without control characters' using errcode = '23514';
    end if;
    insert into workflows_private.webhook_secrets (subscription_id, secret_encrypted)
    values (new.id, workflows_private.encrypt_environment_value(new.secret, workflows_private.environment_key()))
    on conflict (subscription_id) do update set secret_encrypted = excluded.secret_encrypted;
    new.has_secret := true;
  end if;
  new.secret := null;

  -- The dead-delivery record is the delivery functions' to write, never an API user's; switching
  -- the subscription back on starts it afresh.
  if tg_op = 'UPDATE' and new.active and not old.active then
    new.consecutive_dead_deliveries := 0;
    new.dead_since := null;
    new.disabled_at := null;
    new.disabled_reason := null;
  elsif (select auth.role()) in ('authenticated', 'anon') then
    new.consecutive_dead_deliveries := case when tg_op = 'INSERT' then 0 else old.consecutive_dead_deliveries end;
    new.dead_since := case when tg_op = 'INSERT' then null else old.dead_since end;
    new.disabled_at := case when tg_op = 'INSERT' then null else old.disabled_at end;
    new.disabled_reason := case when tg_op = 'INSERT' then null else old.disabled_reason end;
  end if;
  if tg_op = 'UPDATE' then
    new.updated_at := now();
  end if;
  return new;
end;
$$;
comment on function workflows_private.prepare_webhook_subscription() is 'Trigger: fills the workspace, checks the writer and the URL, stores the secret encrypted and out of the row.';

create trigger webhook_subscriptions_prepare before insert or update on public.webhook_subscriptions
  for each row execute function workflows_private.prepare_webhook_subscription();

/** A subscription's signing secret, decrypted, or null when it has none. For the delivery worker only. */
create function workflows_private.webhook_secret(p_subscription_id uuid)
returns text
language plpgsql
stable
security definer
set search_path = ''
as $$
declare
  v_secret bytea;
begin
  select s.secret_encrypted into v_secret from workflows_private.webhook_secrets s where s.subscription_id = p_subscription_id;
  if v_secret is null then
    return null;
  end if;
  return extensions.pgp_sym_decrypt(v_secret, workflows_private.environment_key());
end;
$$;
comment on function workflows_private.webhook_secret(uuid) is 'The decrypted signing secret of a subscription (null without one). No API role may execute it.';

-- Access -------------------------------------------------------------------------------------------

revoke all on public.webhook_subscriptions from public, anon, authenticated;
grant select, insert, update, delete on public.webhook_subscriptions to authenticated;
grant all on public.webhook_subscriptions to service_role;
revoke all on workflows_private.webhook_secrets from public, anon, authenticated, service_role;
alter table public.webhook_subscriptions enable row level security;
alter table workflows_private.webhook_secrets enable row level security;

create policy "Members can read their workspaces' webhook subscriptions" on public.webhook_subscriptions
  for select to authenticated
  using (workspace_id in (select workflows_private.member_workspace_ids('viewer')));
create policy "Editors can add webhook subscriptions" on public.webhook_subscriptions
  for insert to authenticated
  with check (workspace_id in (select workflows_private.member_workspace_ids('editor')));
create policy "Editors can change webhook subscriptions" on public.webhook_subscriptions
  for update to authenticated
  using (workspace_id in (select workflows_private.member_workspace_ids('editor')))
  with check (workspace_id in (select workflows_private.member_workspace_ids('editor')));
create policy "Editors can delete webhook subscriptions" on public.webhook_subscriptions
  for delete to authenticated
  using (workspace_id in (select workflows_private.member_workspace_ids('editor')));

revoke execute on function
  workflows_private.prepare_webhook_subscription(),
  workflows_private.webhook_secret(uuid)
  from public, anon, authenticated, service_role;
