-- Gamification: the per-user rate limit of the gamification API.
--
-- A token bucket per (technician, kind of request), enforced in Postgres so every edge-function
-- instance agrees (as the workflow service does, decisions.md 9). Kinds: `pontuacao` (POST
-- /points) and `consulta` (every GET). Buckets start full, hold `capacidade` tokens and refill
-- continuously at `por_minuto` tokens a minute. The back office (service role) is not limited here;
-- the gateway's own limits still apply to it.

create table gamificacao.limites_config (
  tipo text primary key,
  capacidade integer not null check (capacidade > 0),
  por_minuto integer not null check (por_minuto > 0)
);
comment on table gamificacao.limites_config is 'Rate-limit settings per kind of gamification request.';
comment on column gamificacao.limites_config.capacidade is 'Burst size: requests allowed at once from a full bucket.';
comment on column gamificacao.limites_config.por_minuto is 'Sustained rate: tokens added per minute.';
alter table gamificacao.limites_config enable row level security;

-- Below the gateway's 200/min data-API budget that every API call also spends.
insert into gamificacao.limites_config (tipo, capacidade, por_minuto) values ('pontuacao', 60, 60), ('consulta', 120, 120);

create table gamificacao.limites_uso (
  usuario_id uuid not null,
  tipo text not null references gamificacao.limites_config (tipo),
  tokens double precision not null,
  atualizado_em timestamptz not null,
  permitido boolean not null,
  primary key (usuario_id, tipo)
);
comment on table gamificacao.limites_uso is 'Token buckets: one per (user, kind), updated by every limited request.';
comment on column gamificacao.limites_uso.tokens is 'Tokens left after the last request.';
comment on column gamificacao.limites_uso.atualizado_em is 'When tokens was last computed.';
comment on column gamificacao.limites_uso.permitido is 'Whether the last request was let through.';
alter table gamificacao.limites_uso enable row level security;

/**
 * Spends one token of `p_usuario_id`'s `p_tipo` bucket if it has one. Returns {permitido, limite,
 * restante, reinicio (ISO instant the bucket is full again), retry_after (seconds until a token is
 * available, 0 when allowed)}. A refused request spends nothing. In one statement, so two requests
 * of the same user cannot both take the last token.
 */
create function gamificacao.consumir_limite(p_usuario_id uuid, p_tipo text) returns jsonb
language plpgsql set search_path = '' as $$
declare
  v_config gamificacao.limites_config;
  v_uso gamificacao.limites_uso;
  v_agora timestamptz := now();
  v_por_segundo double precision;
begin
  select * into strict v_config from gamificacao.limites_config where tipo = p_tipo;
  v_por_segundo := v_config.por_minuto / 60.0;

  insert into gamificacao.limites_uso as u (usuario_id, tipo, tokens, atualizado_em, permitido)
  values (p_usuario_id, p_tipo, v_config.capacidade - 1, v_agora, true)
  on conflict (usuario_id, tipo) do update set
    tokens = case
      when least(v_config.capacidade, u.tokens + extract(epoch from v_agora - u.atualizado_em) * v_por_segundo) >= 1
        then least(v_config.capacidade, u.tokens + extract(epoch from v_agora - u.atualizado_em) * v_por_segundo) - 1
      else least(v_config.capacidade, u.tokens + extract(epoch from v_agora - u.atualizado_em) * v_por_segundo)
    end,
    permitido = least(v_config.capacidade, u.tokens + extract(epoch from v_agora - u.atualizado_em) * v_por_segundo) >= 1,
    atualizado_em = v_agora
  returning * into v_uso;

  return jsonb_build_object(
    'permitido', v_uso.permitido,
    'limite', v_config.capacidade,
    'restante', floor(v_uso.tokens)::integer,
    'reinicio', v_agora + make_interval(secs => (v_config.capacidade - v_uso.tokens) / v_por_segundo),
    'retry_after', case when v_uso.permitido then 0 else ceil((1 - v_uso.tokens) / v_por_segundo)::integer end
  );
end;
$$;
comment on function gamificacao.consumir_limite(uuid, text) is
  'Token bucket: spends one token of the user''s bucket of that kind when available and reports the rate-limit headers.';
