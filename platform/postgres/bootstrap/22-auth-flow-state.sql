-- GoTrue's flow_state table (its migrations up to v2.189): one row per PKCE flow an e-mailed link
-- starts, holding the auth code the link hands out and the challenge its verifier must meet, until
-- POST /token?grant_type=pkce uses it up. Written to run again harmlessly: the auth service applies
-- this file when it starts, as GoTrue migrates its schema on boot.

set role supabase_auth_admin;

do $$ begin
  create type auth.code_challenge_method as enum ('s256', 'plain');
exception when duplicate_object then null;
end $$;

-- No foreign key to auth.users, as in GoTrue: a flow state whose user is gone is simply not found.
create table if not exists auth.flow_state (
  id uuid primary key,
  user_id uuid null,
  auth_code text null,
  code_challenge_method auth.code_challenge_method null,
  code_challenge text null,
  provider_type text not null,
  provider_access_token text null,
  provider_refresh_token text null,
  created_at timestamptz null,
  updated_at timestamptz null,
  authentication_method text not null,
  auth_code_issued_at timestamptz null,
  invite_token text null,
  referrer text null,
  oauth_client_state_id uuid null,
  linking_target_id uuid null,
  email_optional boolean not null default false
);
comment on table auth.flow_state is 'Stores metadata for all OAuth/SSO login flows';
create index if not exists idx_auth_code on auth.flow_state (auth_code);
create index if not exists idx_user_id_auth_method on auth.flow_state (user_id, authentication_method);
create index if not exists flow_state_created_at_idx on auth.flow_state (created_at desc);

reset role;

grant all on auth.flow_state to postgres, dashboard_user;
