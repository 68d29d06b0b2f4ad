-- Workflow service: model prices are readable by everyone signed in, and a run's model usage is
-- priced per million tokens, 2.5 times for hosted keys, with the price in effect at the time.
begin;
select plan(21);

insert into auth.users (id, email, aud, role) values ('a5000000-0000-4000-8000-000000000001', 'reader@prices.test', 'authenticated', 'authenticated');

set local role authenticated;
set local request.jwt.claims = '{"sub": "a5000000-0000-4000-8000-000000000001", "role": "authenticated"}';
select ok((select count(*) >= 18 from public.model_prices where provider in ('openai', 'anthropic')), 'Anyone signed in reads the seeded OpenAI and Anthropic prices');
select is((select (input_per_million, output_per_million)::text from public.model_prices where model = 'gpt-4o'), '(2.5000,10.0000)', 'gpt-4o costs $2.50 in and $10 out per million tokens');
select throws_ok($$insert into public.model_prices (provider, model, input_per_million, output_per_million, effective_from) values ('openai', 'free-lunch', 0, 0, now())$$,
  '42501', null, 'A user cannot add prices');
select throws_ok($$update public.model_prices set input_per_million = 0$$, '42501', null, 'nor change them');
reset role;
set local role anon;
set local request.jwt.claims = '{"role": "anon"}';
select throws_ok($$select * from public.model_prices$$, '42501', null, 'Signed-out visitors cannot read prices');
reset role;

-- Pricing ------------------------------------------------------------------------------------------

select is(
  public.price_model_usage('[{"model": "gpt-4o", "promptTokens": 1000, "completionTokens": 500}]', now()) -> 'models' -> 'gpt-4o',
  '{"input": 0.00625, "output": 0.0125, "total": 0.01875, "priced": true, "tokens": {"prompt": 1000, "completion": 500, "total": 1500}}'::jsonb,
  'A hosted key pays 2.5 × (1,000 × $2.50 + 500 × $10) / 1,000,000');
select is(
  public.price_model_usage('[{"model": "gpt-4o", "promptTokens": 1000, "completionTokens": 500, "ownKey": true}]', now()) ->> 'total',
  '0.0075', 'The user''s own key pays the list price');
select is(
  public.price_model_usage('[{"model": "claude-sonnet-4-5", "promptTokens": 2000, "completionTokens": 0}, {"model": "claude-sonnet-4-5", "promptTokens": 0, "completionTokens": 1000, "ownKey": true}]', now())
    -> 'models' -> 'claude-sonnet-4-5',
  '{"input": 0.015, "output": 0.015, "total": 0.03, "priced": true, "tokens": {"prompt": 2000, "completion": 1000, "total": 3000}}'::jsonb,
  'Calls of the same model add up, each at its own key''s rate');
select is(
  public.price_model_usage('[{"model": "house-model-7", "promptTokens": 10, "completionTokens": 10}, {"model": "gpt-4o-mini", "promptTokens": 1000000, "completionTokens": 0}]', now()),
  '{"input": 0.375, "output": 0, "total": 0.375, "tokens": {"prompt": 1000010, "completion": 10, "total": 1000020},
    "models": {"house-model-7": {"input": 0, "output": 0, "total": 0, "priced": false, "tokens": {"prompt": 10, "completion": 10, "total": 20}},
               "gpt-4o-mini": {"input": 0.375, "output": 0, "total": 0.375, "priced": true, "tokens": {"prompt": 1000000, "completion": 0, "total": 1000000}}}}'::jsonb,
  'A model without a price costs nothing and is flagged priced: false; the totals add every model');
select is(public.price_model_usage('[]', now()),
  '{"input": 0, "output": 0, "total": 0, "tokens": {"prompt": 0, "completion": 0, "total": 0}, "models": {}}'::jsonb, 'No usage costs nothing');

insert into public.model_prices (provider, model, input_per_million, output_per_million, effective_from)
values ('openai', 'gpt-4o', 5, 20, now() + interval '1 day');
select is(public.price_model_usage('[{"model": "gpt-4o", "promptTokens": 1000000, "completionTokens": 0, "ownKey": true}]', now()) ->> 'total',
  '2.5', 'A run is priced with the price in effect when it ends');
select is(public.price_model_usage('[{"model": "gpt-4o", "promptTokens": 1000000, "completionTokens": 0, "ownKey": true}]', now() + interval '2 days') ->> 'total',
  '5', 'and a later price applies from its effective date');

select is(public.price_model_usage('[{"model": "gpt-4o", "promptTokens": 1000000, "completionTokens": 0, "ownKey": true}]') ->> 'total',
  '2.5', 'Without a time, usage is priced as of now');

-- Blocks report a model's cost from its summed tokens; the run's record prices each call. Both must
-- give the same decimals for every seeded model, key and (odd) token count.
select is(
  (select count(*) from public.model_prices mp
   cross join (values (false), (true)) k (own_key)
   cross join lateral (select i * 12347 % 299993 as p1, i * 7907 % 300007 as p2, i * 4903 % 90001 as c1, i * 3301 % 89989 as c2
     from generate_series(1, 50) i) t
   where mp.effective_from <= now() and (
     select public.price_model_usage(jsonb_build_array(
       jsonb_build_object('model', mp.model, 'promptTokens', t.p1, 'completionTokens', t.c1, 'ownKey', k.own_key),
       jsonb_build_object('model', mp.model, 'promptTokens', t.p2, 'completionTokens', t.c2, 'ownKey', k.own_key)))
   ) is distinct from (
     select public.price_model_usage(jsonb_build_array(
       jsonb_build_object('model', mp.model, 'promptTokens', t.p1 + t.p2, 'completionTokens', t.c1 + t.c2, 'ownKey', k.own_key)))
   )),
  0::bigint,
  'Pricing a model''s summed tokens gives exactly the decimals of pricing each call and adding them up');

select ok(has_function_privilege('service_role', 'public.price_model_usage(jsonb, timestamptz)', 'execute'),
  'The service role prices usage (the blocks'' reported cost)');
select ok(not has_function_privilege('authenticated', 'public.price_model_usage(jsonb, timestamptz)', 'execute')
  and not has_function_privilege('anon', 'public.price_model_usage(jsonb, timestamptz)', 'execute'),
  'Users and visitors cannot call the pricing function');
set local role service_role;
select is(public.price_model_usage('[{"model": "gpt-4o", "promptTokens": 1000, "completionTokens": 500}]') ->> 'total',
  '0.01875', 'and as the service role it prices with the hosted multiplier');
reset role;

select throws_ok($$select public.price_model_usage('{"model": "gpt-4o"}', now())$$, '22023', null, 'Usage must be a list');
select throws_ok($$select public.price_model_usage('[{"model": "gpt-4o", "promptTokens": -1, "completionTokens": 0}]', now())$$, '22023', null, 'Token counts cannot be negative');
select throws_ok($$select public.price_model_usage('[{"model": "gpt-4o", "promptTokens": 1.5, "completionTokens": 0}]', now())$$, '22023', null, 'nor fractional');
select throws_ok($$select public.price_model_usage('[{"model": "", "promptTokens": 1, "completionTokens": "2"}]', now())$$, '22023', null, 'A model needs a name and numeric counts');

select * from finish();
rollback;
