-- Proposals portal, part 3: the audit log. Triggers on the portal tables (and the
-- admin-reset-password function) append one row per important action: proposals created,
-- approved, rejected, activated or cancelled; product changes; role changes; password resets.
--
-- The log is append-only: no API role may insert, change or delete rows, and a trigger refuses
-- UPDATE and DELETE for everyone else too. That is also why it is the one portal table without
-- updated_at: a row is never updated.

create table public.audit_log (
  id bigint generated always as identity primary key,
  action text not null constraint audit_log_action_format check (action ~ '^[a-z_]+\.[a-z_]+$'),
  actor_id uuid,
  entity_type text not null,
  entity_id text not null,
  details jsonb not null default '{}'::jsonb,
  created_at timestamptz not null default now()
);
comment on table public.audit_log is
  'Append-only record of important portal actions. Readable by admins and super admins only.';
comment on column public.audit_log.id is 'Sequential id; also the order in which actions were recorded.';
comment on column public.audit_log.action is
  'What happened, as <entity>.<verb>: proposal.created, proposal.approved, proposal.rejected, proposal.activated, proposal.cancelled, product.created, product.updated, product.deleted, role.granted, role.revoked, user.password_reset.';
comment on column public.audit_log.actor_id is
  'The signed-in user who acted (auth.uid()); null when a customer acted through an approval link or the system did. No foreign key, so entries outlive deleted users.';
comment on column public.audit_log.entity_type is 'Kind of the affected row: proposal, product, user_role or user.';
comment on column public.audit_log.entity_id is 'Primary key of the affected row, as text.';
comment on column public.audit_log.details is 'Action-specific facts (old and new status, changed columns, customer e-mail, …).';
comment on column public.audit_log.created_at is 'When the action was recorded (transaction time).';

create index audit_log_entity_idx on public.audit_log (entity_type, entity_id);
create index audit_log_created_at_idx on public.audit_log (created_at);

/**
 * Appends one audit entry attributed to the current JWT subject (null outside a user request).
 * Security definer because no API role may write to audit_log directly; callers are the portal's
 * own trigger functions.
 */
create function portal_private.record_audit(_action text, _entity_type text, _entity_id text, _details jsonb default '{}'::jsonb)
returns void
language sql
security definer
set search_path = ''
as $$
  insert into public.audit_log (action, actor_id, entity_type, entity_id, details)
  values (_action, auth.uid(), _entity_type, _entity_id, coalesce(_details, '{}'::jsonb));
$$;
comment on function portal_private.record_audit(text, text, text, jsonb) is
  'Appends an audit_log row for the current user. Called by the portal''s trigger functions only.';

/** Trigger function: refuses UPDATE and DELETE on audit_log, keeping the log append-only. */
create function portal_private.forbid_audit_log_changes()
returns trigger
language plpgsql
set search_path = ''
as $$
begin
  raise exception 'The audit log is append-only: % is not allowed', tg_op
    using errcode = 'insufficient_privilege';
end;
$$;
comment on function portal_private.forbid_audit_log_changes() is
  'BEFORE UPDATE/DELETE trigger on audit_log: refuses every change so the log stays append-only.';

create trigger audit_log_append_only
  before update or delete on public.audit_log
  for each row execute function portal_private.forbid_audit_log_changes();

alter table public.audit_log enable row level security;

revoke all on public.audit_log from anon, authenticated, service_role;
grant select on public.audit_log to authenticated;
-- The admin-reset-password function records resets with the service role (after GoTrue has
-- changed the password), so the service role may append, and only append.
grant select, insert on public.audit_log to service_role;

create policy "Admins can read the audit log" on public.audit_log
  for select to authenticated
  using ((select public.has_role((select auth.uid()), 'admin')));
create policy "Super admins can read the audit log" on public.audit_log
  for select to authenticated
  using ((select public.has_role((select auth.uid()), 'super_admin')));

-- Role changes ------------------------------------------------------------------------------------

/** Trigger function: records every grant, change and revocation of an application role. */
create function portal_private.audit_role_change()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  if tg_op = 'INSERT' then
    perform portal_private.record_audit('role.granted', 'user_role', new.user_id::text, jsonb_build_object('role', new.role));
  elsif tg_op = 'DELETE' then
    perform portal_private.record_audit('role.revoked', 'user_role', old.user_id::text, jsonb_build_object('role', old.role));
  elsif new.role is distinct from old.role then
    perform portal_private.record_audit('role.revoked', 'user_role', old.user_id::text, jsonb_build_object('role', old.role));
    perform portal_private.record_audit('role.granted', 'user_role', new.user_id::text, jsonb_build_object('role', new.role));
  end if;
  return null;
end;
$$;
comment on function portal_private.audit_role_change() is
  'AFTER INSERT/UPDATE/DELETE trigger on user_roles: appends role.granted / role.revoked entries.';

create trigger user_roles_audit
  after insert or update or delete on public.user_roles
  for each row execute function portal_private.audit_role_change();

-- Nothing in portal_private is callable by PUBLIC (see the foundation migration).
revoke execute on all functions in schema portal_private from public;
