-- Gamification: no control characters in the names and texts shown on rankings, badges and the
-- action catalogue (the rule and its reasons are in ..._shared-plain-text.sql). Names, icons and
-- the avatar URL are single-line; descriptions may hold tabs and line breaks. Codes, slugs and
-- city ids already have formats that exclude control characters.

alter table public.tecnicos
  add constraint tecnicos_nome_no_control_characters check (shared_private.is_plain_text(nome)),
  add constraint tecnicos_avatar_url_no_control_characters check (shared_private.is_plain_text(avatar_url));

alter table public.cidades
  add constraint cidades_nome_no_control_characters check (shared_private.is_plain_text(nome));

alter table public.niveis
  add constraint niveis_nome_no_control_characters check (shared_private.is_plain_text(nome));

alter table public.acoes
  add constraint acoes_nome_no_control_characters check (shared_private.is_plain_text(nome)),
  add constraint acoes_descricao_no_control_characters check (shared_private.is_plain_text(descricao, true));

alter table public.badges
  add constraint badges_nome_no_control_characters check (shared_private.is_plain_text(nome)),
  add constraint badges_icone_no_control_characters check (shared_private.is_plain_text(icone)),
  add constraint badges_descricao_no_control_characters check (shared_private.is_plain_text(descricao, true));
