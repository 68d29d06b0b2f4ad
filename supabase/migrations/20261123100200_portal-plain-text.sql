-- Proposals portal: no control characters in the text people type (the rule and its reasons are
-- in ..._shared-plain-text.sql). Names, addresses and titles are single-line; product
-- descriptions and proposal notes may hold tabs and line breaks. E-mail, phone, CNPJ, CEP and UF
-- already have strict formats that exclude control characters.
--
-- A profile's name is copied from the auth user's metadata, which the Auth service stores as
-- given; refusing it there would fail the sign-up with a 500 ("Database error saving new user").
-- So the copy is made plain instead (control characters become spaces), and a rename through the
-- data API is refused like any other bad value.

alter table public.profiles
  add constraint profiles_full_name_no_control_characters check (shared_private.is_plain_text(full_name));

alter table public.customers
  add constraint customers_company_name_no_control_characters check (shared_private.is_plain_text(company_name)),
  add constraint customers_contact_name_no_control_characters check (shared_private.is_plain_text(contact_name)),
  add constraint customers_street_no_control_characters check (shared_private.is_plain_text(street)),
  add constraint customers_city_no_control_characters check (shared_private.is_plain_text(city));

alter table public.products
  add constraint products_name_no_control_characters check (shared_private.is_plain_text(name)),
  add constraint products_description_no_control_characters check (shared_private.is_plain_text(description, true));

alter table public.proposals
  add constraint proposals_notes_no_control_characters check (shared_private.is_plain_text(notes, true));

alter table public.holidays
  add constraint holidays_name_no_control_characters check (shared_private.is_plain_text(name));

/**
 * Trigger function on auth.users: creates the profile of every new user and keeps its e-mail in
 * sync. Security definer because the auth service (supabase_auth_admin) has no rights on public.
 * The name comes from user metadata the Auth service accepted as is, so it is made plain rather
 * than refused: a refusal here would turn the sign-up into a 500.
 */
create or replace function portal_private.sync_profile_from_auth_user()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
begin
  if tg_op = 'INSERT' then
    insert into public.profiles (user_id, full_name, email)
    values (
      new.id,
      left(shared_private.plain_text_of(coalesce(new.raw_user_meta_data ->> 'full_name', new.raw_user_meta_data ->> 'name', '')), 200),
      new.email
    )
    on conflict (user_id) do nothing;
  elsif new.email is distinct from old.email then
    update public.profiles set email = new.email where user_id = new.id;
  end if;
  return new;
end;
$$;
comment on function portal_private.sync_profile_from_auth_user() is
  'AFTER INSERT/UPDATE trigger on auth.users: creates the user''s profile (name made plain) and keeps profiles.email in sync.';

revoke execute on all functions in schema portal_private from public;
