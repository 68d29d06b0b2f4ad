-- Workflow service: plans, meters, seats, threshold billing, period closing and who reads billing records.
begin;
select plan(53);

insert into auth.users (id, email, aud, role) values
  ('a6000000-0000-4000-8000-000000000001', 'owner@billing.test', 'authenticated', 'authenticated'),
  ('a6000000-0000-4000-8000-000000000002', 'admin@billing.test', 'authenticated', 'authenticated'),
  ('a6000000-0000-4000-8000-000000000003', 'editor@billing.test', 'authenticated', 'authenticated'),
  ('a6000000-0000-4000-8000-000000000004', 'stranger@billing.test', 'authenticated', 'authenticated');
create function pg_temp.act_as(p_user uuid) returns void language sql as $$
  select set_config('role', 'authenticated', true), set_config('request.jwt.claims', json_build_object('sub', p_user, 'role', 'authenticated')::text, true);
$$;
create function pg_temp.meter() returns workflows_private.account_meters language sql as $$
  select m.* from workflows_private.account_meters m join public.billing_accounts a on a.id = m.billing_account_id where a.name = 'Billing test';
$$;

select pg_temp.act_as('a6000000-0000-4000-8000-000000000001');
select public.create_workspace('Alpha');
reset role;
update public.billing_accounts set name = 'Billing test' where owner_id = 'a6000000-0000-4000-8000-000000000001';
create temporary table acct as select id from public.billing_accounts where owner_id = 'a6000000-0000-4000-8000-000000000001';
grant select on acct to authenticated;

-- The catalogue ----------------------------------------------------------------------------------

select pg_temp.act_as('a6000000-0000-4000-8000-000000000004');
select is(
  (select array_agg(format('%s %s/%s/%s $%s', plan, sync_per_minute, async_per_minute, logs_per_minute, usage_limit) order by priority) from public.billing_plans),
  array['free 5/10/10 $10.00', 'pro 10/50/30 $100.00', 'team 50/100/60 $500.00', 'enterprise 150/1000/120 $1000.00'],
  'Anyone signed in reads the plans: per-minute rates and monthly usage limits');
select throws_ok($$update public.billing_plans set usage_limit = 1e6$$, '42501', null, 'A user cannot change the plans');
reset role;
set local role anon;
set local request.jwt.claims = '{"role": "anon"}';
select throws_ok($$select * from public.billing_plans$$, '42501', null, 'Signed-out visitors cannot read the plans');
reset role;

-- Meters and seats -------------------------------------------------------------------------------

select is((pg_temp.meter()).plan, 'free', 'A new account gets a meter on its plan');
select is(((pg_temp.meter()).sync_tokens, (pg_temp.meter()).async_tokens, (pg_temp.meter()).logs_tokens)::text, '(5,10,10)', 'with full buckets');
select is(((pg_temp.meter()).period_start, (pg_temp.meter()).period_end)::text,
  (date_trunc('month', now(), 'UTC'), date_trunc('month', now(), 'UTC') + interval '1 month')::text, 'and the current UTC calendar month as its open period');
select is((select count(*)::int from public.billing_periods where billing_account_id = (select id from acct) and status = 'open'), 1, 'which is recorded as open');
select is((pg_temp.meter()).seats, 1, 'Its owner is its one seat');

insert into public.workspace_members (workspace_id, user_id, role)
select w.id, u.id, u.role from public.workspaces w, (values ('a6000000-0000-4000-8000-000000000002'::uuid, 'admin'), ('a6000000-0000-4000-8000-000000000003'::uuid, 'editor')) u (id, role)
where w.name = 'Alpha';
select is((pg_temp.meter()).seats, 3, 'Every member is a seat');
select pg_temp.act_as('a6000000-0000-4000-8000-000000000001');
select public.create_workspace('Beta', (select id from acct));
reset role;
insert into public.workspace_members (workspace_id, user_id, role) select id, 'a6000000-0000-4000-8000-000000000002', 'viewer' from public.workspaces where name = 'Beta';
select is((pg_temp.meter()).seats, 3, 'Someone in two workspaces of the account is one seat');
delete from public.workspace_members where user_id = 'a6000000-0000-4000-8000-000000000003';
select is((pg_temp.meter()).seats, 2, 'Leaving frees the seat');

update public.billing_accounts set plan = 'team' where id = (select id from acct);
select is(((pg_temp.meter()).sync_limit, (pg_temp.meter()).included_usage, (pg_temp.meter()).usage_limit)::text, '(50,80.00,500.00)',
  'On Team: 50 sync runs a minute, $40 of usage included per seat, $500 pooled limit');
select is((pg_temp.meter()).sync_tokens, 50::double precision, 'A bigger bucket is felt at once');
insert into auth.users (id, email, aud, role) select gen_random_uuid(), format('seat%s@billing.test', n), 'authenticated', 'authenticated' from generate_series(1, 12) n;
insert into public.workspace_members (workspace_id, user_id, role)
select w.id, u.id, 'viewer' from public.workspaces w, auth.users u where w.name = 'Beta' and u.email like 'seat%@billing.test';
select is(((pg_temp.meter()).seats, (pg_temp.meter()).included_usage, (pg_temp.meter()).usage_limit)::text, '(14,560.00,560.00)',
  'A Team''s limit never falls below what its seats include');

insert into public.billing_account_overrides (billing_account_id, sync_per_minute, usage_limit) values ((select id from acct), 7, 9000);
select is(((pg_temp.meter()).sync_limit, (pg_temp.meter()).async_limit, (pg_temp.meter()).usage_limit)::text, '(7,100,9000.00)', 'An override replaces the figures it sets, field by field');
select is((pg_temp.meter()).sync_tokens, 7::double precision, 'A smaller bucket keeps what was used this minute (nothing, here)');
delete from public.billing_account_overrides where billing_account_id = (select id from acct);
select is(((pg_temp.meter()).sync_limit, (pg_temp.meter()).usage_limit)::text, '(50,560.00)', 'Removing the override restores the plan''s figures');

-- Spending ---------------------------------------------------------------------------------------

update workflows_private.account_meters set sync_tokens = 20 where billing_account_id = (select id from acct);
update public.billing_accounts set plan = 'free' where id = (select id from acct);
select is((pg_temp.meter()).sync_tokens, 0::double precision, 'Having used 30 of Team''s 50, a move to Free (5) leaves its bucket empty');
update workflows_private.account_meters set sync_tokens = 5 where billing_account_id = (select id from acct);
select is((workflows_private.spend((select id from acct), 'sync', true, 0, now())).refusal, null, 'A run takes a token');
select is(((pg_temp.meter()).sync_tokens, (pg_temp.meter()).period_cost)::text, '(4,0.0010000000)', 'and is charged the base price');
select workflows_private.spend((select id from acct), 'sync', true, 0, now()) from generate_series(1, 4);
select is((workflows_private.spend((select id from acct), 'sync', true, 0, now())).refusal, 'rate', 'An empty bucket refuses');
select is(((pg_temp.meter()).sync_tokens, (pg_temp.meter()).period_cost)::text, '(0,0.0050000000)', 'and a refusal changes nothing');
select is((workflows_private.spend((select id from acct), 'sync', true, 0, now() + interval '12 seconds')).refusal, null, 'Free refills one sync token every 12 seconds');
select is((workflows_private.spend((select id from acct), 'async', true, 0, now())).refusal, null, 'Each kind has its own bucket');
select is(((workflows_private.spend((select id from acct), 'logs', false, 0, now())).meter).period_cost, 0.007::numeric(20, 10), 'A logs API request costs nothing');
update workflows_private.account_meters set period_cost = 10 where billing_account_id = (select id from acct);
select is((workflows_private.spend((select id from acct), null, true, 0, now())).refusal, 'usage', 'At the usage limit a run is refused');
select is((workflows_private.spend((select id from acct), null, false, 1.5, now())).refusal, null, 'but a finished run''s model cost is still charged');
select is(
  (select s - 'resetAt' || jsonb_build_object('resetAt', (s ->> 'resetAt')::timestamptz - now())
   from workflows_private.rate_limit_state(pg_temp.meter(), 'sync', now() + interval '12 seconds') s),
  '{"limit": 5, "isLimited": true, "remaining": 0, "retryAfter": 12, "resetAt": "00:01:12"}'::jsonb,
  'The rate-limit state reads a bucket without spending: empty, a token in 12 s, full 72 s from now');

-- Threshold billing ------------------------------------------------------------------------------

update public.billing_accounts set plan = 'pro' where id = (select id from acct);
update workflows_private.account_meters set period_cost = 69.9995 where billing_account_id = (select id from acct);
select is(workflows_private.bill_threshold((select id from acct), now()), null, 'Pro: $49.9995 of unbilled overage is below the $50 threshold');
select workflows_private.spend((select id from acct), null, true, 0, now());
select isnt(workflows_private.bill_threshold((select id from acct), now()), null, 'Reaching $50 of overage bills it at once');
select is((select (i.kind, i.total, i.bill_to)::text from public.invoices i where i.billing_account_id = (select id from acct)),
  '(threshold,50.00,a6000000-0000-4000-8000-000000000001)', 'as a threshold invoice to the owner');
select is((pg_temp.meter()).billed_overage, 50.00::numeric(14, 2), 'and remembers what it billed');
select is(workflows_private.bill_threshold((select id from acct), now()), null, 'Billed overage is not billed twice');
update workflows_private.account_meters set period_cost = 80 where billing_account_id = (select id from acct);

-- Closing periods --------------------------------------------------------------------------------

select is(workflows_private.close_due_billing_periods((pg_temp.meter()).period_end - interval '1 second'), 0, 'Nothing closes before a period ends');
create temporary table closed_at as select (pg_temp.meter()).period_end + interval '5 minutes' as at;
select workflows_private.close_due_billing_periods((select at from closed_at));
select is((select count(*)::int from public.billing_periods where billing_account_id = (select id from acct) and status = 'closed'), 1, 'The hourly job closes a period that ended');
select is((select (status, plan, usage_cost, included_usage, overage, billed_overage)::text from public.billing_periods where billing_account_id = (select id from acct) order by starts_at limit 1),
  '(closed,pro,80.0000000000,20.00,60.0000000000,60.00)', 'A closed period keeps its figures');
select is((select jsonb_agg(jsonb_build_object('kind', l.kind, 'amount', l.amount) order by l.kind) from public.invoice_lines l join public.invoices i on i.id = l.invoice_id where i.kind = 'period' and i.billing_account_id = (select id from acct)),
  '[{"kind": "overage", "amount": 10.00}, {"kind": "subscription", "amount": 20.00}]'::jsonb,
  'Pro''s period invoice: the $20 subscription and the overage the threshold invoice left ($80 − $20 − $50)');
select is((select total from public.invoices where kind = 'period' and billing_account_id = (select id from acct)), 30.00::numeric(14, 2), 'An invoice totals its lines');
select ok((pg_temp.meter()).period_cost = 0 and (pg_temp.meter()).billed_overage = 0 and (pg_temp.meter()).period_start = date_trunc('month', now(), 'UTC') + interval '1 month',
  'The next period starts from zero');
select is(workflows_private.roll_billing_period((select id from acct), (select at from closed_at)), 0, 'Closing again closes nothing');

update public.billing_accounts set plan = 'team' where id = (select id from acct);
update workflows_private.account_meters set period_cost = 600 where billing_account_id = (select id from acct);
select is(workflows_private.roll_billing_period((select id from acct), (pg_temp.meter()).period_end + interval '2 months'), 3, 'An idle account has every month closed in turn');
select is((select array_agg(l.amount order by i.issued_at, l.kind) from public.invoice_lines l join public.invoices i on i.id = l.invoice_id where i.kind = 'period' and i.period_id in (
    select p.id from public.billing_periods p where p.billing_account_id = (select id from acct) and p.starts_at > date_trunc('month', now(), 'UTC'))),
  array[40.00, 560.00, 560.00, 560.00]::numeric(14, 2)[],
  'Team: $40 × 14 seats each month, and overage above the seats'' $560 only where there was usage');

update public.billing_accounts set plan = 'enterprise' where id = (select id from acct);
insert into public.billing_account_overrides (billing_account_id, subscription_price) values ((select id from acct), 2500);
update workflows_private.account_meters set period_cost = 5000 where billing_account_id = (select id from acct);
select workflows_private.close_due_billing_periods((pg_temp.meter()).period_end);
select is((select array_agg(format('%s %s', l.kind, l.amount)) from public.invoice_lines l join public.invoices i on i.id = l.invoice_id where i.period_id = (
    select p.id from public.billing_periods p where p.billing_account_id = (select id from acct) and p.status = 'closed' order by p.starts_at desc limit 1)),
  array['subscription 2500.00'], 'Enterprise: its agreed price, no overage');

delete from public.billing_account_overrides where billing_account_id = (select id from acct);
update public.billing_accounts set plan = 'free' where id = (select id from acct);
select workflows_private.close_due_billing_periods((pg_temp.meter()).period_end);
select is((select count(*)::int from public.invoices i join public.billing_periods p on p.id = i.period_id where p.billing_account_id = (select id from acct) and p.plan = 'free'), 0,
  'Free: nothing to invoice');

select ok((select bool_and(active) and count(*) = 3 from cron.job where jobname in ('workflows-close-billing-periods', 'workflows-sweep-runs', 'workflows-expire-idempotency-keys')),
  'pg_cron closes periods hourly, sweeps runs every minute and expires Idempotency-Keys hourly');

-- Who reads billing records ----------------------------------------------------------------------

insert into public.usage_ledger (execution_id, kind, billing_account_id, period_id, amount)
select gen_random_uuid(), 'execution', (select id from acct), (pg_temp.meter()).period_id, 0.001;
insert into public.billing_account_overrides (billing_account_id, usage_limit) values ((select id from acct), 11);
select pg_temp.act_as('a6000000-0000-4000-8000-000000000001');
select ok((select count(*) > 0 from public.billing_periods) and (select count(*) > 0 from public.invoices) and (select count(*) > 0 from public.invoice_lines)
  and (select count(*) > 0 from public.usage_ledger) and (select count(*) = 1 from public.billing_account_overrides),
  'The owner reads the account''s periods, invoices, lines, ledger and agreement');
select throws_ok($$select * from workflows_private.account_meters$$, '42501', null, 'but not the meter itself');
select throws_ok($$insert into public.invoices (billing_account_id, period_id, kind, total) values ((select id from acct), gen_random_uuid(), 'period', 0)$$, '42501', null, 'Nobody writes invoices');
select pg_temp.act_as('a6000000-0000-4000-8000-000000000002');
select is((select count(*)::int from public.billing_periods) + (select count(*)::int from public.invoices) + (select count(*)::int from public.invoice_lines)
  + (select count(*)::int from public.usage_ledger) + (select count(*)::int from public.billing_account_overrides), 0,
  'A workspace admin reads none of the account''s billing records');
select pg_temp.act_as('a6000000-0000-4000-8000-000000000004');
select is((select count(*)::int from public.billing_periods) + (select count(*)::int from public.invoices) + (select count(*)::int from public.invoice_lines)
  + (select count(*)::int from public.usage_ledger) + (select count(*)::int from public.billing_account_overrides), 0,
  'nor does a stranger');
select throws_ok($$insert into public.billing_account_overrides (billing_account_id, usage_limit) values ((select id from acct), 1e9)$$, '42501', null, 'Users cannot write overrides');
reset role;
set local role anon;
set local request.jwt.claims = '{"role": "anon"}';
select throws_ok($$select * from public.invoices$$, '42501', null, 'Signed-out visitors read no invoices');
reset role;
set local role service_role;
set local request.jwt.claims = '{"role": "service_role"}';
select throws_ok($$update public.usage_ledger set amount = 0$$, '42501', null, 'Not even the service role rewrites the ledger');
reset role;

select * from finish();
rollback;
