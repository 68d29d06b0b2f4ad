-- Workflow service, part 2: what model tokens cost. Prices are per million tokens, in USD, with the
-- date they take effect, so a price change is a new row and past runs keep the price they ran
-- under (decisions, "Cost"). The spec's rule: model cost = (input tokens × input price + output
-- tokens × output price) / 1,000,000; the platform's own (hosted) provider keys cost 2.5 times the
-- provider's price, the user's own key costs the price itself.
--
-- Seeded with the providers' list prices for their current text models (standard tier, no cached
-- input or batch discounts), as published by OpenAI and Anthropic in 2025. Update them by adding
-- rows with a later effective_from.

create table public.model_prices (
  id uuid primary key default gen_random_uuid(),
  provider text not null check (provider ~ '^[a-z0-9-]{1,40}$'),
  model text not null check (char_length(model) between 1 and 200),
  input_per_million numeric(12, 4) not null check (input_per_million >= 0),
  output_per_million numeric(12, 4) not null check (output_per_million >= 0),
  hosted_multiplier numeric(6, 3) not null default 2.5 check (hosted_multiplier >= 1),
  effective_from timestamptz not null,
  created_at timestamptz not null default now(),
  unique (model, effective_from)
);
comment on table public.model_prices is 'Model token prices per million tokens (USD), each valid from effective_from until the model''s next row. Readable by everyone signed in; written by the service role.';
comment on column public.model_prices.provider is 'openai, anthropic, ...';
comment on column public.model_prices.id is 'Row id.';
comment on column public.model_prices.created_at is 'When the row was added.';
comment on column public.model_prices.model is 'The model id as blocks report it in their usage (e.g. gpt-4o, claude-sonnet-4-5).';
comment on column public.model_prices.input_per_million is 'USD per million prompt (input) tokens.';
comment on column public.model_prices.output_per_million is 'USD per million completion (output) tokens.';
comment on column public.model_prices.hosted_multiplier is 'Factor applied when the run used the platform''s own provider key (2.5 per the spec); a run with the user''s own key pays the price itself.';
comment on column public.model_prices.effective_from is 'When this price takes effect; a run is priced with the latest row not after its end.';

insert into public.model_prices (provider, model, input_per_million, output_per_million, effective_from) values
  ('openai', 'gpt-5', 1.25, 10.00, '2025-01-01T00:00:00Z'),
  ('openai', 'gpt-5-mini', 0.25, 2.00, '2025-01-01T00:00:00Z'),
  ('openai', 'gpt-5-nano', 0.05, 0.40, '2025-01-01T00:00:00Z'),
  ('openai', 'gpt-4.1', 2.00, 8.00, '2025-01-01T00:00:00Z'),
  ('openai', 'gpt-4.1-mini', 0.40, 1.60, '2025-01-01T00:00:00Z'),
  ('openai', 'gpt-4.1-nano', 0.10, 0.40, '2025-01-01T00:00:00Z'),
  ('openai', 'gpt-4o', 2.50, 10.00, '2025-01-01T00:00:00Z'),
  ('openai', 'gpt-4o-mini', 0.15, 0.60, '2025-01-01T00:00:00Z'),
  ('openai', 'o3', 2.00, 8.00, '2025-01-01T00:00:00Z'),
  ('openai', 'o4-mini', 1.10, 4.40, '2025-01-01T00:00:00Z'),
  ('openai', 'o1', 15.00, 60.00, '2025-01-01T00:00:00Z'),
  ('anthropic', 'claude-opus-4-1', 15.00, 75.00, '2025-01-01T00:00:00Z'),
  ('anthropic', 'claude-opus-4', 15.00, 75.00, '2025-01-01T00:00:00Z'),
  ('anthropic', 'claude-sonnet-4-5', 3.00, 15.00, '2025-01-01T00:00:00Z'),
  ('anthropic', 'claude-sonnet-4', 3.00, 15.00, '2025-01-01T00:00:00Z'),
  ('anthropic', 'claude-3-7-sonnet', 3.00, 15.00, '2025-01-01T00:00:00Z'),
  ('anthropic', 'claude-haiku-4-5', 1.00, 5.00, '2025-01-01T00:00:00Z'),
  ('anthropic', 'claude-3-5-haiku', 0.80, 4.00, '2025-01-01T00:00:00Z');

/** Whether a JSON value is a whole, non-negative number below 10^15 (a token count). */
create function workflows_private.is_token_count(p_value jsonb)
returns boolean
language plpgsql
immutable
set search_path = ''
as $$
begin
  return case when jsonb_typeof(p_value) = 'number'
    then (p_value::text)::numeric >= 0 and (p_value::text)::numeric < 1e15 and (p_value::text)::numeric % 1 = 0
    else false end;
end;
$$;
comment on function workflows_private.is_token_count(jsonb) is 'True for a whole, non-negative JSON number below 10^15.';

/**
 * Prices model usage: the one implementation of the cost formula. finish_workflow_run prices a
 * run's usage with it, and the Agent and LLM Router blocks ask it (as the service role) for the
 * cost they report, so the two cannot disagree. `p_usage` is a JSON array of {model, promptTokens,
 * completionTokens, ownKey?}, one entry per model call or already summed (entries of the same model
 * add up; the formula is linear and numeric keeps every digit of a cost under $10,000, so calls
 * priced one by one and their summed tokens give the same decimals). Returns
 * {input, output, total, tokens {prompt, completion, total}, models {<model>: {input, output, total,
 * tokens {…}, priced}}}: the spec's cost shape without the base charge, in exact decimals. Each
 * entry is priced with the model's row in effect at `p_at`, times its hosted_multiplier unless
 * ownKey. A model without a price costs 0 and is reported with `priced: false` (the run is still
 * recorded; the operator adds the price). Malformed usage raises 22023.
 */
create function public.price_model_usage(p_usage jsonb, p_at timestamptz default now())
returns jsonb
language plpgsql
stable
set search_path = ''
as $$
declare
  v_result jsonb;
begin
  if jsonb_typeof(p_usage) is distinct from 'array' or exists (
    select 1 from jsonb_array_elements(p_usage) e
    where jsonb_typeof(e) <> 'object'
      or jsonb_typeof(e -> 'model') is distinct from 'string' or char_length(e ->> 'model') not between 1 and 200
      or not workflows_private.is_token_count(e -> 'promptTokens')
      or not workflows_private.is_token_count(e -> 'completionTokens')
      or (e ? 'ownKey' and jsonb_typeof(e -> 'ownKey') <> 'boolean')
  ) then
    raise exception 'Model usage must be an array of {model, promptTokens, completionTokens, ownKey?} with whole, non-negative token counts'
      using errcode = '22023';
  end if;

  with usage as (
    select e ->> 'model' as model, (e ->> 'promptTokens')::numeric as prompt, (e ->> 'completionTokens')::numeric as completion,
      coalesce((e ->> 'ownKey')::boolean, false) as own_key
    from jsonb_array_elements(p_usage) e
  ),
  priced as (
    select u.model, u.prompt, u.completion, p.id is not null as priced,
      coalesce(u.prompt * p.input_per_million * case when u.own_key then 1 else p.hosted_multiplier end / 1000000, 0) as input,
      coalesce(u.completion * p.output_per_million * case when u.own_key then 1 else p.hosted_multiplier end / 1000000, 0) as output
    from usage u
    left join lateral (
      select mp.id, mp.input_per_million, mp.output_per_million, mp.hosted_multiplier
      from public.model_prices mp
      where mp.model = u.model and mp.effective_from <= p_at
      order by mp.effective_from desc
      limit 1
    ) p on true
  ),
  per_model as (
    select model, sum(prompt) as prompt, sum(completion) as completion, sum(input) as input, sum(output) as output, bool_and(priced) as priced
    from priced group by model
  )
  select jsonb_build_object(
    'input', trim_scale(coalesce(sum(input), 0)),
    'output', trim_scale(coalesce(sum(output), 0)),
    'total', trim_scale(coalesce(sum(input + output), 0)),
    'tokens', jsonb_build_object('prompt', coalesce(sum(prompt), 0), 'completion', coalesce(sum(completion), 0), 'total', coalesce(sum(prompt + completion), 0)),
    'models', coalesce(jsonb_object_agg(model, jsonb_build_object(
      'input', trim_scale(input), 'output', trim_scale(output), 'total', trim_scale(input + output),
      'tokens', jsonb_build_object('prompt', prompt, 'completion', completion, 'total', prompt + completion),
      'priced', priced)) filter (where model is not null), '{}'::jsonb))
  into v_result
  from per_model;
  return v_result;
end;
$$;
comment on function public.price_model_usage(jsonb, timestamptz) is 'The cost of model usage (spec cost shape, without the base charge), the one place the formula lives: runs are recorded and blocks report their cost with it; unknown models cost 0 and are flagged priced: false. Service role only.';

-- Access -----------------------------------------------------------------------------------------

revoke all on public.model_prices from public, anon, authenticated;
grant select on public.model_prices to authenticated;
grant all on public.model_prices to service_role;
alter table public.model_prices enable row level security;
create policy "Everyone signed in can read model prices" on public.model_prices
  for select to authenticated
  using (true);

revoke execute on function public.price_model_usage(jsonb, timestamptz), workflows_private.is_token_count(jsonb) from public, anon, authenticated, service_role;
grant execute on function public.price_model_usage(jsonb, timestamptz), workflows_private.is_token_count(jsonb) to service_role;
