-- Workflow service, part 2: plans, rate limits, usage, billing periods and invoices. Everything is
-- attributed to the billing account that pays for the workspace (decisions, "Cost"); Team accounts
-- pool the usage of all their workspaces. Money is numeric, never floating point.
--
-- - billing_plans: the catalogue (spec, "Limits"): per-minute rates for sync runs, async runs and
--   the logs API, the monthly usage limit, the subscription and what it includes.
-- - billing_account_overrides: an account's own figures (Enterprise agreements), field by field.
-- - workflows_private.account_meters: one row per account with everything a run checks and changes
--   (the three token buckets, the open period and its usage), so admitting a run is one UPDATE of
--   one row: spend a token and charge the base price, or refuse (decisions 9 and 10).
-- - billing_periods: calendar months in UTC; the first one is the month the account was created.
--   pg_cron closes them (and a run that arrives first closes its own account's).
-- - usage_ledger: append-only, one row per charge, keyed by (execution, kind) so nothing is ever
--   charged twice.
-- - invoices and invoice_lines: the contract with the (absent) payment provider: period invoices
--   (subscription, overage) and threshold invoices (unbilled overage reaching $50 is billed at once).

-- Plans ------------------------------------------------------------------------------------------

create table public.billing_plans (
  plan text primary key check (plan in ('free', 'pro', 'team', 'enterprise')),
  name text not null,
  priority smallint not null unique,
  sync_per_minute integer not null check (sync_per_minute > 0),
  async_per_minute integer not null check (async_per_minute > 0),
  logs_per_minute integer not null check (logs_per_minute > 0),
  usage_limit numeric(12, 2) not null check (usage_limit >= 0),
  subscription_price numeric(12, 2) not null default 0 check (subscription_price >= 0),
  price_per_seat boolean not null default false,
  included_usage numeric(12, 2) not null default 0 check (included_usage >= 0),
  bills_overage boolean not null default false,
  execution_charge numeric(12, 6) not null default 0.001 check (execution_charge >= 0),
  overage_threshold numeric(12, 2) not null default 50 check (overage_threshold > 0)
);
comment on table public.billing_plans is 'The plan catalogue: rate limits, monthly usage limit, subscription and included usage. Readable by everyone signed in.';
comment on column public.billing_plans.priority is 'Higher wins when a user belongs to several accounts ("the highest-priority active plan").';
comment on column public.billing_plans.plan is 'Plan id, as billing_accounts.plan names it: free, pro, team or enterprise.';
comment on column public.billing_plans.name is 'Display name.';
comment on column public.billing_plans.sync_per_minute is 'Synchronous runs per minute (token bucket capacity and refill per minute).';
comment on column public.billing_plans.async_per_minute is 'Asynchronous runs per minute.';
comment on column public.billing_plans.logs_per_minute is 'Logs API requests per minute.';
comment on column public.billing_plans.usage_limit is 'USD of usage per period after which runs answer 402 (Team: pooled, and never below the included usage).';
comment on column public.billing_plans.subscription_price is 'USD per period (per seat when price_per_seat), invoiced when the period closes.';
comment on column public.billing_plans.price_per_seat is 'True when the subscription and the included usage are per seat (Team).';
comment on column public.billing_plans.included_usage is 'USD of usage the subscription includes per period (per seat when price_per_seat); usage above it is overage.';
comment on column public.billing_plans.bills_overage is 'Whether usage above the included amount is invoiced (Pro, Team). Free stops at its limit; Enterprise is a fixed price.';
comment on column public.billing_plans.execution_charge is 'USD charged per execution on top of its model cost (the spec''s $0.001 base).';
comment on column public.billing_plans.overage_threshold is 'Unbilled overage that triggers an immediate threshold invoice (USD).';

insert into public.billing_plans
  (plan, name, priority, sync_per_minute, async_per_minute, logs_per_minute, usage_limit, subscription_price, price_per_seat, included_usage, bills_overage)
values
  ('free', 'Free', 1, 5, 10, 10, 10, 0, false, 0, false),
  ('pro', 'Pro', 2, 10, 50, 30, 100, 20, false, 20, true),
  ('team', 'Team', 3, 50, 100, 60, 500, 40, true, 40, true),
  -- Enterprise figures are per account (billing_account_overrides); these apply until one is entered.
  ('enterprise', 'Enterprise', 4, 150, 1000, 120, 1000, 0, false, 0, false);

create table public.billing_account_overrides (
  billing_account_id uuid primary key references public.billing_accounts (id) on delete cascade,
  sync_per_minute integer check (sync_per_minute > 0),
  async_per_minute integer check (async_per_minute > 0),
  logs_per_minute integer check (logs_per_minute > 0),
  usage_limit numeric(14, 2) check (usage_limit >= 0),
  subscription_price numeric(14, 2) check (subscription_price >= 0),
  note text check (note is null or char_length(note) <= 500),
  updated_at timestamptz not null default now()
);
comment on table public.billing_account_overrides is 'An account''s own figures (Enterprise agreements); each non-null field replaces the plan''s. Written by the service role, readable by the account''s owner.';
comment on column public.billing_account_overrides.sync_per_minute is 'Replaces the plan''s synchronous runs per minute.';
comment on column public.billing_account_overrides.async_per_minute is 'Replaces the plan''s asynchronous runs per minute.';
comment on column public.billing_account_overrides.logs_per_minute is 'Replaces the plan''s logs API requests per minute.';
comment on column public.billing_account_overrides.usage_limit is 'Replaces the monthly usage limit (USD).';
comment on column public.billing_account_overrides.subscription_price is 'Replaces the price per period (USD; Enterprise''s fixed price). Per seat when the plan prices per seat.';
comment on column public.billing_account_overrides.note is 'The agreement this comes from.';
comment on column public.billing_account_overrides.billing_account_id is 'The account the figures apply to.';
comment on column public.billing_account_overrides.updated_at is 'When the figures were last written.';

-- Periods, invoices, ledger ---------------------------------------------------------------------

create table public.billing_periods (
  id uuid primary key default gen_random_uuid(),
  billing_account_id uuid not null references public.billing_accounts (id) on delete cascade,
  starts_at timestamptz not null,
  ends_at timestamptz not null,
  status text not null default 'open' check (status in ('open', 'closed')),
  plan text,
  seats integer,
  usage_cost numeric(20, 10),
  included_usage numeric(14, 2),
  overage numeric(20, 10),
  billed_overage numeric(14, 2),
  closed_at timestamptz,
  unique (billing_account_id, starts_at),
  check (ends_at > starts_at)
);
comment on table public.billing_periods is 'Billing periods: calendar months in UTC, from the month the account was created. One is open per account; closing writes its figures and its invoice. Readable by the account''s owner.';
comment on column public.billing_periods.status is 'open (the current month; live usage is in GET /api/users/me/usage-limits) or closed.';
comment on column public.billing_periods.plan is 'The plan the period was billed under (set when it closes).';
comment on column public.billing_periods.seats is 'Distinct members across the account''s workspaces when the period closed.';
comment on column public.billing_periods.usage_cost is 'USD of usage charged in the period (set when it closes).';
comment on column public.billing_periods.included_usage is 'USD of usage the subscription included.';
comment on column public.billing_periods.overage is 'Usage above the included amount (0 when the plan bills no overage).';
comment on column public.billing_periods.billed_overage is 'Overage invoiced during the period by threshold invoices.';
comment on column public.billing_periods.closed_at is 'When the period was closed.';
comment on column public.billing_periods.id is 'Period id.';
comment on column public.billing_periods.billing_account_id is 'The account billed.';
comment on column public.billing_periods.starts_at is 'First instant of the period (00:00 UTC on the 1st).';
comment on column public.billing_periods.ends_at is 'First instant after it (the next months start).';

create table public.invoices (
  id uuid primary key default gen_random_uuid(),
  billing_account_id uuid not null references public.billing_accounts (id) on delete cascade,
  period_id uuid not null references public.billing_periods (id) on delete cascade,
  kind text not null check (kind in ('period', 'threshold')),
  bill_to uuid references auth.users (id) on delete set null,
  currency text not null default 'USD',
  total numeric(14, 2) not null check (total >= 0),
  issued_at timestamptz not null default now()
);
comment on table public.invoices is 'Invoices, the records a payment provider would be sent: a period invoice when a period closes (subscription and the overage not yet billed) and threshold invoices during it. Readable by the account''s owner.';
comment on column public.invoices.kind is 'period (end of period: subscription and remaining overage) or threshold (unbilled overage reached the plan''s threshold).';
comment on column public.invoices.bill_to is 'The account owner the bill goes to (Team: one bill to the owner).';
comment on column public.invoices.total is 'Sum of the lines, USD.';
comment on column public.invoices.id is 'Invoice id.';
comment on column public.invoices.billing_account_id is 'The account invoiced.';
comment on column public.invoices.period_id is 'The billing period the invoice belongs to.';
comment on column public.invoices.currency is 'Always USD.';
comment on column public.invoices.issued_at is 'When it was written.';
create index invoices_billing_account_id_idx on public.invoices (billing_account_id, issued_at);
create index invoices_period_id_idx on public.invoices (period_id);

create table public.invoice_lines (
  id uuid primary key default gen_random_uuid(),
  invoice_id uuid not null references public.invoices (id) on delete cascade,
  kind text not null check (kind in ('subscription', 'overage')),
  description text not null,
  quantity numeric(14, 4) not null,
  unit_price numeric(20, 10) not null,
  amount numeric(14, 2) not null check (amount >= 0)
);
comment on table public.invoice_lines is 'Lines of an invoice: the subscription (quantity = seats for Team) and overage.';
comment on column public.invoice_lines.kind is 'subscription or overage.';
comment on column public.invoice_lines.quantity is 'Seats (subscription) or 1.';
comment on column public.invoice_lines.unit_price is 'USD per unit before rounding.';
comment on column public.invoice_lines.amount is 'USD, rounded half up to the cent.';
comment on column public.invoice_lines.id is 'Line id.';
comment on column public.invoice_lines.invoice_id is 'The invoice.';
comment on column public.invoice_lines.description is 'What is billed, in words.';
create index invoice_lines_invoice_id_idx on public.invoice_lines (invoice_id);

-- An enum, not a CHECK: ledger rows are written on every run (see workflow_executions' enums).
create type public.usage_charge_kind as enum ('execution', 'models');
comment on type public.usage_charge_kind is 'What a ledger row charges: an execution''s base price, or its model usage.';

create table public.usage_ledger (
  execution_id uuid not null,
  kind public.usage_charge_kind not null,
  billing_account_id uuid not null,
  period_id uuid not null,
  workspace_id uuid,
  workflow_id uuid,
  amount numeric(20, 10) not null,
  created_at timestamptz not null default now(),
  -- An execution is charged to the one account it was admitted under, so this key is as unique as
  -- (execution_id, kind), and the same index serves an account's listing and its RLS policy.
  primary key (billing_account_id, execution_id, kind)
);
comment on table public.usage_ledger is 'Append-only record of every charge: the base charge of each execution when it is admitted and its model cost when it finishes. The key (account, execution, kind) makes a second charge impossible. Rows outlive the workflows and runs they describe, so they carry no foreign keys to them. Readable by the account''s owner.';
comment on column public.usage_ledger.execution_id is 'The run charged (workflow_executions.id while the run exists).';
comment on column public.usage_ledger.kind is 'execution (the base charge) or models (the run''s model cost).';
comment on column public.usage_ledger.period_id is 'The billing period the amount was added to.';
comment on column public.usage_ledger.amount is 'USD.';
comment on column public.usage_ledger.billing_account_id is 'The account charged (the runs, when admitted).';
comment on column public.usage_ledger.workspace_id is 'The workspace whose run it was.';
comment on column public.usage_ledger.workflow_id is 'The workflow whose run it was.';
comment on column public.usage_ledger.created_at is 'When the charge was made; it falls in the period it was added to.';

-- Meters -----------------------------------------------------------------------------------------

create table workflows_private.account_meters (
  billing_account_id uuid primary key references public.billing_accounts (id) on delete cascade,
  plan text not null,
  priority smallint not null,
  seats integer not null default 0,
  sync_limit integer not null,
  async_limit integer not null,
  logs_limit integer not null,
  usage_limit numeric(14, 2) not null,
  included_usage numeric(14, 2) not null,
  bills_overage boolean not null,
  overage_threshold numeric(12, 2) not null,
  execution_charge numeric(12, 6) not null,
  subscription_price numeric(14, 2) not null,
  price_per_seat boolean not null,
  period_id uuid not null,
  period_start timestamptz not null,
  period_end timestamptz not null,
  period_cost numeric(20, 10) not null default 0,
  billed_overage numeric(14, 2) not null default 0,
  sync_tokens double precision not null,
  sync_at timestamptz not null,
  async_tokens double precision not null,
  async_at timestamptz not null,
  logs_tokens double precision not null,
  logs_at timestamptz not null
) with (fillfactor = 50);
comment on table workflows_private.account_meters is 'Per billing account: its effective limits (plan, overrides, seats), its open period''s usage and its three token buckets. Every admitted run updates its account''s row once. Low fillfactor keeps those updates on the same page (HOT).';
comment on column workflows_private.account_meters.seats is 'Distinct members across the account''s workspaces.';
comment on column workflows_private.account_meters.usage_limit is 'Effective monthly usage limit (USD).';
comment on column workflows_private.account_meters.included_usage is 'Effective usage included in the subscription this period (USD; Team: per seat × seats).';
comment on column workflows_private.account_meters.period_cost is 'USD charged in the open period so far.';
comment on column workflows_private.account_meters.billed_overage is 'Overage of the open period already invoiced by threshold invoices.';
comment on column workflows_private.account_meters.sync_tokens is 'Tokens in the sync bucket at sync_at (capacity sync_limit, refilled continuously at sync_limit a minute).';
comment on column workflows_private.account_meters.async_tokens is 'Tokens in the async bucket at async_at.';
comment on column workflows_private.account_meters.logs_tokens is 'Tokens in the logs API bucket at logs_at.';
comment on column workflows_private.account_meters.billing_account_id is 'The account metered.';
comment on column workflows_private.account_meters.plan is 'Its plan (copied from billing_accounts).';
comment on column workflows_private.account_meters.priority is 'Its plans priority.';
comment on column workflows_private.account_meters.sync_limit is 'Effective sync runs per minute (bucket capacity).';
comment on column workflows_private.account_meters.async_limit is 'Effective async runs per minute.';
comment on column workflows_private.account_meters.logs_limit is 'Effective logs API requests per minute.';
comment on column workflows_private.account_meters.bills_overage is 'Whether usage above the included amount is invoiced.';
comment on column workflows_private.account_meters.overage_threshold is 'Unbilled overage that triggers a threshold invoice.';
comment on column workflows_private.account_meters.execution_charge is 'USD charged per execution.';
comment on column workflows_private.account_meters.subscription_price is 'Effective price per period (per seat when price_per_seat).';
comment on column workflows_private.account_meters.price_per_seat is 'Whether the price and included usage are per seat.';
comment on column workflows_private.account_meters.period_id is 'The open billing period.';
comment on column workflows_private.account_meters.period_start is 'Its start.';
comment on column workflows_private.account_meters.period_end is 'Its end: the first run or cron job after it rolls the period over.';
comment on column workflows_private.account_meters.sync_at is 'When sync_tokens was computed.';
comment on column workflows_private.account_meters.async_at is 'When async_tokens was computed.';
comment on column workflows_private.account_meters.logs_at is 'When logs_tokens was computed.';

/**
 * Tokens in a bucket of capacity `p_capacity` (refilled continuously at `p_capacity` a minute) that
 * held `p_tokens` at `p_at`, as of `p_now`. A plain SQL expression without a SET clause on purpose:
 * Postgres inlines it into the statements that use it (a SET clause would make every call a
 * separate plan, ~15 µs); it only names pg_catalog functions, so search_path cannot change it.
 */
create function workflows_private.bucket_tokens(p_tokens double precision, p_at timestamptz, p_capacity integer, p_now timestamptz)
returns double precision
language sql
immutable
as $$
  select least(p_capacity::double precision, p_tokens + greatest(0, pg_catalog.date_part('epoch', p_now - p_at)) * p_capacity / 60.0)
$$;
comment on function workflows_private.bucket_tokens(double precision, timestamptz, integer, timestamptz) is 'Token bucket level at p_now: continuous refill at capacity per minute, capped at capacity.';

/**
 * The level of a bucket whose capacity changes from `p_old` to `p_new` at `p_now`: its level then,
 * plus the difference, within [0, p_new]. What was used this minute stays used, so an upgrade is
 * felt at once and a downgrade cannot be dodged by spending first.
 */
create function workflows_private.resize_bucket(p_tokens double precision, p_at timestamptz, p_old integer, p_new integer, p_now timestamptz)
returns double precision
language sql
immutable
as $$
  select greatest(0, least(p_new::double precision, workflows_private.bucket_tokens(p_tokens, p_at, p_old, p_now) + p_new - p_old))
$$;
comment on function workflows_private.resize_bucket(double precision, timestamptz, integer, integer, timestamptz) is 'Bucket level after a capacity change: same tokens used, new capacity.';

/** The first instant of the UTC calendar month containing `p_at`: where billing periods start. */
create function workflows_private.period_start_of(p_at timestamptz)
returns timestamptz
language sql
immutable
set search_path = ''
as $$
  select pg_catalog.date_trunc('month', p_at, 'UTC');
$$;
comment on function workflows_private.period_start_of(timestamptz) is 'Start of the UTC calendar month containing the instant.';

/**
 * Writes an account's effective limits into its meter: the plan's figures, replaced field by field
 * by the account's overrides, and the seat count (distinct members across its workspaces). Team's
 * usage limit never falls below what its seats include. Creates the meter (full buckets) and opens
 * the first period when the account has none yet. Token levels and usage are never reset here.
 */
create function workflows_private.refresh_account_meter(p_account_id uuid, p_now timestamptz default now())
returns void
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_plan public.billing_plans;
  v_override public.billing_account_overrides;
  v_seats integer;
  v_included numeric;
  v_limit numeric;
  v_period public.billing_periods;
begin
  select p.* into v_plan from public.billing_accounts a join public.billing_plans p on p.plan = a.plan where a.id = p_account_id;
  if not found then
    return;
  end if;
  select o.* into v_override from public.billing_account_overrides o where o.billing_account_id = p_account_id;
  select count(distinct m.user_id)::integer into v_seats
  from public.workspaces w join public.workspace_members m on m.workspace_id = w.id
  where w.billing_account_id = p_account_id;
  v_included := v_plan.included_usage * case when v_plan.price_per_seat then greatest(v_seats, 1) else 1 end;
  v_limit := coalesce(v_override.usage_limit, case when v_plan.price_per_seat then greatest(v_plan.usage_limit, v_included) else v_plan.usage_limit end);

  update workflows_private.account_meters m set
    plan = v_plan.plan, priority = v_plan.priority, seats = v_seats,
    sync_limit = coalesce(v_override.sync_per_minute, v_plan.sync_per_minute),
    async_limit = coalesce(v_override.async_per_minute, v_plan.async_per_minute),
    logs_limit = coalesce(v_override.logs_per_minute, v_plan.logs_per_minute),
    usage_limit = v_limit, included_usage = v_included, bills_overage = v_plan.bills_overage,
    overage_threshold = v_plan.overage_threshold, execution_charge = v_plan.execution_charge,
    subscription_price = coalesce(v_override.subscription_price, v_plan.subscription_price), price_per_seat = v_plan.price_per_seat,
    -- A new capacity applies at once and keeps what was used this minute: the bucket gains (or
    -- loses, never below empty) the difference.
    sync_tokens = workflows_private.resize_bucket(m.sync_tokens, m.sync_at, m.sync_limit, coalesce(v_override.sync_per_minute, v_plan.sync_per_minute), p_now),
    sync_at = p_now,
    async_tokens = workflows_private.resize_bucket(m.async_tokens, m.async_at, m.async_limit, coalesce(v_override.async_per_minute, v_plan.async_per_minute), p_now),
    async_at = p_now,
    logs_tokens = workflows_private.resize_bucket(m.logs_tokens, m.logs_at, m.logs_limit, coalesce(v_override.logs_per_minute, v_plan.logs_per_minute), p_now),
    logs_at = p_now
  where m.billing_account_id = p_account_id;
  if found then
    return;
  end if;

  insert into public.billing_periods (billing_account_id, starts_at, ends_at)
  values (p_account_id, workflows_private.period_start_of(p_now), workflows_private.period_start_of(p_now) + interval '1 month')
  on conflict (billing_account_id, starts_at) do update set status = public.billing_periods.status
  returning * into v_period;
  insert into workflows_private.account_meters (
    billing_account_id, plan, priority, seats, sync_limit, async_limit, logs_limit, usage_limit, included_usage,
    bills_overage, overage_threshold, execution_charge, subscription_price, price_per_seat,
    period_id, period_start, period_end, sync_tokens, sync_at, async_tokens, async_at, logs_tokens, logs_at
  ) values (
    p_account_id, v_plan.plan, v_plan.priority, v_seats,
    coalesce(v_override.sync_per_minute, v_plan.sync_per_minute), coalesce(v_override.async_per_minute, v_plan.async_per_minute),
    coalesce(v_override.logs_per_minute, v_plan.logs_per_minute), v_limit, v_included,
    v_plan.bills_overage, v_plan.overage_threshold, v_plan.execution_charge,
    coalesce(v_override.subscription_price, v_plan.subscription_price), v_plan.price_per_seat,
    v_period.id, v_period.starts_at, v_period.ends_at,
    coalesce(v_override.sync_per_minute, v_plan.sync_per_minute), p_now,
    coalesce(v_override.async_per_minute, v_plan.async_per_minute), p_now,
    coalesce(v_override.logs_per_minute, v_plan.logs_per_minute), p_now
  )
  on conflict (billing_account_id) do nothing;
end;
$$;
comment on function workflows_private.refresh_account_meter(uuid, timestamptz) is 'Recomputes an account''s effective limits and seats into its meter, creating the meter and its first period if needed.';

-- Charging ---------------------------------------------------------------------------------------

/** Invoices `p_lines` ({kind, description, quantity, unit_price, amount}) to the account's owner. */
create function workflows_private.write_invoice(p_account_id uuid, p_period_id uuid, p_kind text, p_lines jsonb, p_now timestamptz)
returns uuid
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_invoice uuid;
begin
  insert into public.invoices (billing_account_id, period_id, kind, bill_to, total, issued_at)
  select p_account_id, p_period_id, p_kind, a.owner_id,
    (select coalesce(sum((l ->> 'amount')::numeric), 0) from jsonb_array_elements(p_lines) l), p_now
  from public.billing_accounts a where a.id = p_account_id
  returning id into v_invoice;
  insert into public.invoice_lines (invoice_id, kind, description, quantity, unit_price, amount)
  select v_invoice, l ->> 'kind', l ->> 'description', (l ->> 'quantity')::numeric, (l ->> 'unit_price')::numeric, (l ->> 'amount')::numeric
  from jsonb_array_elements(p_lines) l;
  return v_invoice;
end;
$$;
comment on function workflows_private.write_invoice(uuid, uuid, text, jsonb, timestamptz) is 'Writes an invoice and its lines, billed to the account''s owner; returns its id.';

/**
 * Threshold billing: when the open period's unbilled overage (usage above the included amount, less
 * what threshold invoices already billed) reaches the plan's threshold, all of it is invoiced at
 * once, rounded to the cent (the sub-cent remainder stays unbilled for the next invoice). Call it
 * holding the meter's row lock. Returns the invoice id, or null when nothing was due.
 */
create function workflows_private.bill_threshold(p_account_id uuid, p_now timestamptz)
returns uuid
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_meter workflows_private.account_meters;
  v_amount numeric;
  v_invoice uuid;
begin
  select * into v_meter from workflows_private.account_meters m where m.billing_account_id = p_account_id for update;
  v_amount := greatest(0, v_meter.period_cost - v_meter.included_usage) - v_meter.billed_overage;
  if not v_meter.bills_overage or v_amount < v_meter.overage_threshold then
    return null;
  end if;
  v_amount := round(v_amount, 2);
  v_invoice := workflows_private.write_invoice(p_account_id, v_meter.period_id, 'threshold', jsonb_build_array(jsonb_build_object(
    'kind', 'overage', 'description', 'Usage above the included amount (threshold reached)', 'quantity', 1, 'unit_price', v_amount, 'amount', v_amount)), p_now);
  update workflows_private.account_meters m set billed_overage = m.billed_overage + v_amount where m.billing_account_id = p_account_id;
  return v_invoice;
end;
$$;
comment on function workflows_private.bill_threshold(uuid, timestamptz) is 'Invoices the open period''s unbilled overage once it reaches the plan''s threshold; null when nothing is due.';

/**
 * Closes every period of the account that ended at or before `p_now` and opens the next, month by
 * month (an account idle for months gets each month's subscription). A closed period records its
 * figures and gets a period invoice: the subscription (per seat for Team, Enterprise's agreed price)
 * and the overage not yet billed by threshold invoices. Nothing is invoiced for a period that owes
 * nothing (Free). The meter's usage starts again from zero. Serialised by the meter's row lock, so
 * the cron job and a run arriving at the turn of the month cannot both close the same period.
 * Returns how many periods were closed.
 */
create function workflows_private.roll_billing_period(p_account_id uuid, p_now timestamptz default now())
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_meter workflows_private.account_meters;
  v_overage numeric;
  v_due numeric;
  v_lines jsonb;
  v_next public.billing_periods;
  v_closed integer := 0;
begin
  loop
    select * into v_meter from workflows_private.account_meters m where m.billing_account_id = p_account_id for update;
    exit when not found or v_meter.period_end > p_now;

    v_overage := case when v_meter.bills_overage then greatest(0, v_meter.period_cost - v_meter.included_usage) else 0 end;
    v_due := round(v_overage - v_meter.billed_overage, 2);
    v_lines := '[]'::jsonb;
    if v_meter.subscription_price > 0 then
      v_lines := v_lines || jsonb_build_array(jsonb_build_object(
        'kind', 'subscription',
        'description', format('%s plan, %s', initcap(v_meter.plan), to_char(v_meter.period_start at time zone 'UTC', 'FMMonth YYYY'))
          || case when v_meter.price_per_seat then format(' (%s seats)', greatest(v_meter.seats, 1)) else '' end,
        'quantity', case when v_meter.price_per_seat then greatest(v_meter.seats, 1) else 1 end,
        'unit_price', v_meter.subscription_price,
        'amount', round(v_meter.subscription_price * case when v_meter.price_per_seat then greatest(v_meter.seats, 1) else 1 end, 2)));
    end if;
    if v_due > 0 then
      v_lines := v_lines || jsonb_build_array(jsonb_build_object(
        'kind', 'overage', 'description', 'Usage above the included amount', 'quantity', 1, 'unit_price', v_due, 'amount', v_due));
    end if;
    if jsonb_array_length(v_lines) > 0 then
      perform workflows_private.write_invoice(p_account_id, v_meter.period_id, 'period', v_lines, p_now);
    end if;

    update public.billing_periods p set
      status = 'closed', plan = v_meter.plan, seats = v_meter.seats, usage_cost = v_meter.period_cost,
      included_usage = v_meter.included_usage, overage = v_overage, billed_overage = v_meter.billed_overage + greatest(v_due, 0),
      closed_at = p_now
    where p.id = v_meter.period_id;

    insert into public.billing_periods (billing_account_id, starts_at, ends_at)
    values (p_account_id, v_meter.period_end, v_meter.period_end + interval '1 month')
    returning * into v_next;
    update workflows_private.account_meters m set
      period_id = v_next.id, period_start = v_next.starts_at, period_end = v_next.ends_at, period_cost = 0, billed_overage = 0
    where m.billing_account_id = p_account_id;
    v_closed := v_closed + 1;
  end loop;
  return v_closed;
end;
$$;
comment on function workflows_private.roll_billing_period(uuid, timestamptz) is 'Closes the account''s ended periods (figures and period invoice) and opens the next; returns how many closed.';

/** The pg_cron job's work: rolls over every account whose open period has ended by `p_now`. */
create function workflows_private.close_due_billing_periods(p_now timestamptz default now())
returns integer
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_account uuid;
  v_closed integer := 0;
begin
  for v_account in select m.billing_account_id from workflows_private.account_meters m where m.period_end <= p_now order by m.billing_account_id
  loop
    v_closed := v_closed + workflows_private.roll_billing_period(v_account, p_now);
  end loop;
  return v_closed;
end;
$$;
comment on function workflows_private.close_due_billing_periods(timestamptz) is 'Closes every ended billing period (pg_cron, hourly); returns how many were closed.';
create index account_meters_period_end_idx on workflows_private.account_meters (period_end);

create type workflows_private.spend_outcome as (refusal text, meter workflows_private.account_meters);
comment on type workflows_private.spend_outcome is 'What spend() did: refusal null (admitted) or usage / rate, and the meter after it.';

/**
 * Admits one unit of work for an account in one UPDATE of its meter row, which also serialises
 * concurrent admissions (exactly as many get through as the bucket holds): takes a token from
 * bucket `p_bucket` ('sync', 'async', 'logs', or null for work without a rate limit) and adds to
 * the open period the plan's execution charge (when `p_execution`) plus `p_amount` USD. When
 * `p_execution`, refuses once the period's usage has reached the limit (refusal 'usage'); an
 * empty bucket refuses with 'rate'. A refusal changes nothing. A period that has ended is rolled
 * over first. The outcome's meter is the row after the update (or as read, when refused).
 */
create function workflows_private.spend(p_account_id uuid, p_bucket text, p_execution boolean, p_amount numeric, p_now timestamptz)
returns workflows_private.spend_outcome
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_meter workflows_private.account_meters;
begin
  for attempt in 1..2 loop
    update workflows_private.account_meters m set
      sync_tokens = case when p_bucket = 'sync' then workflows_private.bucket_tokens(m.sync_tokens, m.sync_at, m.sync_limit, p_now) - 1 else m.sync_tokens end,
      sync_at = case when p_bucket = 'sync' then p_now else m.sync_at end,
      async_tokens = case when p_bucket = 'async' then workflows_private.bucket_tokens(m.async_tokens, m.async_at, m.async_limit, p_now) - 1 else m.async_tokens end,
      async_at = case when p_bucket = 'async' then p_now else m.async_at end,
      logs_tokens = case when p_bucket = 'logs' then workflows_private.bucket_tokens(m.logs_tokens, m.logs_at, m.logs_limit, p_now) - 1 else m.logs_tokens end,
      logs_at = case when p_bucket = 'logs' then p_now else m.logs_at end,
      period_cost = m.period_cost + case when p_execution then m.execution_charge else 0 end + p_amount
    where m.billing_account_id = p_account_id
      and p_now < m.period_end
      and (not p_execution or m.period_cost < m.usage_limit)
      and case p_bucket
        when 'sync' then workflows_private.bucket_tokens(m.sync_tokens, m.sync_at, m.sync_limit, p_now) >= 1
        when 'async' then workflows_private.bucket_tokens(m.async_tokens, m.async_at, m.async_limit, p_now) >= 1
        when 'logs' then workflows_private.bucket_tokens(m.logs_tokens, m.logs_at, m.logs_limit, p_now) >= 1
        else true end
    returning m.* into v_meter;
    if found then
      return (null, v_meter)::workflows_private.spend_outcome;
    end if;

    select * into v_meter from workflows_private.account_meters m where m.billing_account_id = p_account_id;
    if not found then
      perform workflows_private.refresh_account_meter(p_account_id, p_now);
    elsif v_meter.period_end <= p_now then
      perform workflows_private.roll_billing_period(p_account_id, p_now);
    elsif p_execution and v_meter.period_cost >= v_meter.usage_limit then
      return ('usage', v_meter)::workflows_private.spend_outcome;
    else
      return ('rate', v_meter)::workflows_private.spend_outcome;
    end if;
  end loop;
  raise exception 'Billing account % has no usable meter', p_account_id;
end;
$$;
comment on function workflows_private.spend(uuid, text, boolean, numeric, timestamptz) is 'One UPDATE of the account''s meter: takes a rate-limit token and charges the period, or refuses (usage / rate) changing nothing.';

/** Rate-limit state of one bucket, without spending: {isLimited, limit, remaining, resetAt, retryAfter}. */
create function workflows_private.rate_limit_state(p_meter workflows_private.account_meters, p_bucket text, p_now timestamptz)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
declare
  v_limit integer := case p_bucket when 'sync' then p_meter.sync_limit when 'async' then p_meter.async_limit else p_meter.logs_limit end;
  v_tokens double precision := workflows_private.bucket_tokens(
    case p_bucket when 'sync' then p_meter.sync_tokens when 'async' then p_meter.async_tokens else p_meter.logs_tokens end,
    case p_bucket when 'sync' then p_meter.sync_at when 'async' then p_meter.async_at else p_meter.logs_at end,
    v_limit, p_now);
begin
  return jsonb_build_object(
    'isLimited', v_tokens < 1,
    'limit', v_limit,
    'remaining', greatest(0, floor(v_tokens))::integer,
    'resetAt', p_now + make_interval(secs => (v_limit - v_tokens) * 60.0 / v_limit),
    'retryAfter', case when v_tokens >= 1 then 0 else ceil((1 - v_tokens) * 60.0 / v_limit)::integer end);
end;
$$;
comment on function workflows_private.rate_limit_state(workflows_private.account_meters, text, timestamptz) is 'A bucket''s level as the X-RateLimit-* headers report it (resetAt: when it is full again).';

/** The usage part of the API's answers: {currentPeriodCost, limit, plan, isExceeded, periodEnd}. */
create function workflows_private.usage_state(p_meter workflows_private.account_meters)
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
begin
  return jsonb_build_object(
    'currentPeriodCost', trim_scale(p_meter.period_cost),
    'limit', trim_scale(p_meter.usage_limit),
    'plan', p_meter.plan,
    'isExceeded', p_meter.period_cost >= p_meter.usage_limit,
    'periodEnd', p_meter.period_end);
end;
$$;
comment on function workflows_private.usage_state(workflows_private.account_meters) is 'Usage of the open period as the API reports it.';

-- Keeping meters current -------------------------------------------------------------------------

/** Trigger: a new account gets its meter and first period; a plan change updates its limits. */
create function workflows_private.on_billing_account_change()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  perform workflows_private.refresh_account_meter(new.id);
  return null;
end;
$$;
comment on function workflows_private.on_billing_account_change() is 'Trigger: refreshes the meter of an inserted account or one whose plan changed.';
create trigger billing_accounts_refresh_meter after insert or update of plan on public.billing_accounts
  for each row execute function workflows_private.on_billing_account_change();

/** Trigger: an override written or removed changes the account's limits. */
create function workflows_private.on_override_change()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  perform workflows_private.refresh_account_meter(case when tg_op = 'DELETE' then old.billing_account_id else new.billing_account_id end);
  return null;
end;
$$;
comment on function workflows_private.on_override_change() is 'Trigger: refreshes the meter of the account whose override changed.';
create trigger billing_account_overrides_refresh_meter after insert or update or delete on public.billing_account_overrides
  for each row execute function workflows_private.on_override_change();

/**
 * Trigger (per statement): memberships or workspaces changed, so seat counts may have. Refreshes
 * each affected account once, however many rows the statement touched.
 */
create function workflows_private.on_seats_change()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_account uuid;
begin
  if tg_table_name = 'workspace_members' then
    for v_account in
      select distinct w.billing_account_id from changed_rows c join public.workspaces w on w.id = c.workspace_id order by 1
    loop
      perform workflows_private.refresh_account_meter(v_account);
    end loop;
  else
    for v_account in select distinct c.billing_account_id from changed_rows c order by 1
    loop
      perform workflows_private.refresh_account_meter(v_account);
    end loop;
  end if;
  return null;
end;
$$;
comment on function workflows_private.on_seats_change() is 'Statement trigger: refreshes the meters of the accounts whose seats may have changed.';
create trigger workspace_members_refresh_seats_insert after insert on public.workspace_members
  referencing new table as changed_rows for each statement execute function workflows_private.on_seats_change();
create trigger workspace_members_refresh_seats_delete after delete on public.workspace_members
  referencing old table as changed_rows for each statement execute function workflows_private.on_seats_change();
create trigger workspaces_refresh_seats_insert after insert on public.workspaces
  referencing new table as changed_rows for each statement execute function workflows_private.on_seats_change();
-- An update may move a workspace to another account: both the old and the new account are refreshed.
create trigger workspaces_refresh_seats_moved_from after update on public.workspaces
  referencing old table as changed_rows for each statement execute function workflows_private.on_seats_change();
create trigger workspaces_refresh_seats_moved_to after update on public.workspaces
  referencing new table as changed_rows for each statement execute function workflows_private.on_seats_change();
create trigger workspaces_refresh_seats_delete after delete on public.workspaces
  referencing old table as changed_rows for each statement execute function workflows_private.on_seats_change();

select cron.schedule('workflows-close-billing-periods', '5 * * * *', $$select workflows_private.close_due_billing_periods()$$);

-- Access -----------------------------------------------------------------------------------------

revoke all on public.billing_plans, public.billing_account_overrides, public.billing_periods, public.invoices,
  public.invoice_lines, public.usage_ledger from public, anon, authenticated;
grant select on public.billing_plans, public.billing_account_overrides, public.billing_periods, public.invoices,
  public.invoice_lines, public.usage_ledger to authenticated;
-- The service role (a back office) maintains the catalogue and the agreements; periods, invoices and
-- the ledger are written only by the functions here, so it reads those.
grant all on public.billing_plans, public.billing_account_overrides to service_role;
grant select on public.billing_periods, public.invoices, public.invoice_lines, public.usage_ledger to service_role;
revoke all on workflows_private.account_meters from public, anon, authenticated, service_role;

alter table public.billing_plans enable row level security;
alter table public.billing_account_overrides enable row level security;
alter table public.billing_periods enable row level security;
alter table public.invoices enable row level security;
alter table public.invoice_lines enable row level security;
alter table public.usage_ledger enable row level security;
alter table workflows_private.account_meters enable row level security;

/** Accounts the caller owns (for the billing records' policies). */
create function workflows_private.owned_billing_account_ids()
returns setof uuid
language sql
stable
security definer
set search_path = ''
as $$
  select a.id from public.billing_accounts a where a.owner_id = (select auth.uid());
$$;
comment on function workflows_private.owned_billing_account_ids() is 'Ids of the billing accounts the calling user owns (for RLS policies).';
grant execute on function workflows_private.owned_billing_account_ids() to authenticated, service_role;

create policy "Everyone signed in can read the plan catalogue" on public.billing_plans
  for select to authenticated
  using (true);
create policy "Owners can read their accounts' overrides" on public.billing_account_overrides
  for select to authenticated
  using (billing_account_id in (select workflows_private.owned_billing_account_ids()));
create policy "Owners can read their accounts' billing periods" on public.billing_periods
  for select to authenticated
  using (billing_account_id in (select workflows_private.owned_billing_account_ids()));
create policy "Owners can read their accounts' invoices" on public.invoices
  for select to authenticated
  using (billing_account_id in (select workflows_private.owned_billing_account_ids()));
create policy "Owners can read their accounts' invoice lines" on public.invoice_lines
  for select to authenticated
  using (invoice_id in (select i.id from public.invoices i where i.billing_account_id in (select workflows_private.owned_billing_account_ids())));
create policy "Owners can read their accounts' usage ledger" on public.usage_ledger
  for select to authenticated
  using (billing_account_id in (select workflows_private.owned_billing_account_ids()));

revoke execute on function
  workflows_private.bucket_tokens(double precision, timestamptz, integer, timestamptz),
  workflows_private.resize_bucket(double precision, timestamptz, integer, integer, timestamptz),
  workflows_private.period_start_of(timestamptz),
  workflows_private.refresh_account_meter(uuid, timestamptz),
  workflows_private.write_invoice(uuid, uuid, text, jsonb, timestamptz),
  workflows_private.bill_threshold(uuid, timestamptz),
  workflows_private.roll_billing_period(uuid, timestamptz),
  workflows_private.close_due_billing_periods(timestamptz),
  workflows_private.spend(uuid, text, boolean, numeric, timestamptz),
  workflows_private.rate_limit_state(workflows_private.account_meters, text, timestamptz),
  workflows_private.usage_state(workflows_private.account_meters),
  workflows_private.on_billing_account_change(),
  workflows_private.on_override_change(),
  workflows_private.on_seats_change()
  from public, anon, authenticated, service_role;
