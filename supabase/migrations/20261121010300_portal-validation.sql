-- Proposals portal, part 4: local validators for Brazilian identifiers and contact data.
--
-- CNPJ: 14 characters, the first 12 in [0-9A-Z] (the alphanumeric format assigned from July 2026;
-- purely numeric CNPJs are the special case with digits only), the last 2 numeric check digits.
-- Each character is worth its ASCII code minus 48 ('0'..'9' → 0..9, 'A' → 17 … 'Z' → 42); each
-- check digit is the mod-11 of the characters before it weighted 2..9 from the right (restarting at
-- 2), with remainders 0 and 1 giving 0. Values are stored normalised (mask removed, upper case).
--
-- These functions are immutable and are used both by normalising triggers (for clear messages)
-- and by CHECK constraints (so no row can bypass them). CHECK constraints run their functions as
-- the writing role, hence the EXECUTE grants at the end.

/** Strips the CNPJ mask (dots, slash, hyphen, spaces) and upper-cases letters. */
create function portal_private.normalize_cnpj(_value text)
returns text
language sql
immutable
strict
set search_path = ''
as $$
  select upper(regexp_replace(_value, '[./\s-]', '', 'g'));
$$;
comment on function portal_private.normalize_cnpj(text) is
  'CNPJ without mask characters, upper case: ''12.abc.345/01de-35'' → ''12ABC34501DE35''.';

/**
 * The mod-11 check digit of a normalised CNPJ prefix (12 characters for the first digit, 13 for
 * the second). Weights run 2..9 from the rightmost character and restart at 2.
 */
create function portal_private.cnpj_check_digit(_prefix text)
returns integer
language sql
immutable
strict
set search_path = ''
as $$
  select case when total % 11 < 2 then 0 else 11 - total % 11 end
  from (
    select sum((ascii(substr(_prefix, position, 1)) - 48) * (2 + (length(_prefix) - position) % 8)) as total
    from generate_series(1, length(_prefix)) as position
  ) as weighted;
$$;
comment on function portal_private.cnpj_check_digit(text) is
  'Mod-11 CNPJ check digit of a 12- or 13-character prefix (character value = ASCII code − 48).';

/**
 * Whether a normalised value is a valid CNPJ: 12 alphanumeric characters, 2 matching check digits,
 * and not one character repeated 14 times (those pass mod-11 but are never issued).
 */
create function portal_private.is_valid_cnpj(_value text)
returns boolean
language sql
immutable
set search_path = ''
as $$
  -- CASE, not AND: the digit casts must only run once the format is known to be right.
  select case
    when _value is null or _value !~ '^[0-9A-Z]{12}[0-9]{2}$' or _value ~ '^(.)\1{13}$' then false
    else substr(_value, 13, 1)::integer = portal_private.cnpj_check_digit(substr(_value, 1, 12))
      and substr(_value, 14, 1)::integer = portal_private.cnpj_check_digit(substr(_value, 1, 13))
  end;
$$;
comment on function portal_private.is_valid_cnpj(text) is
  'True for a normalised, numeric or alphanumeric (2026) CNPJ whose check digits match.';

/**
 * Whether an e-mail address is plausible: the WHATWG "valid e-mail address" grammar (what browsers
 * accept in <input type=email>), a dot in the domain, and at most 254 characters.
 */
create function portal_private.is_valid_email(_value text)
returns boolean
language sql
immutable
set search_path = ''
as $$
  select coalesce(
    char_length(_value) <= 254
      and _value ~ '^[A-Za-z0-9.!#$%&''*+/=?^_`{|}~-]+@[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$',
    false
  );
$$;
comment on function portal_private.is_valid_email(text) is
  'True for an address browsers accept as type=email, with a dotted domain, up to 254 characters.';

/**
 * A Brazilian phone number reduced to area code + number digits: punctuation, spaces and a leading
 * country code 55 are dropped, so '+55 (11) 99999-9999' and '11999999999' store alike.
 */
create function portal_private.normalize_phone(_value text)
returns text
language sql
immutable
strict
set search_path = ''
as $$
  select case
    when length(digits) in (12, 13) and left(digits, 2) = '55' then substr(digits, 3)
    else digits
  end
  from (select regexp_replace(_value, '\D', '', 'g') as digits) as stripped;
$$;
comment on function portal_private.normalize_phone(text) is
  'Digits of a Brazilian phone without country code: ''+55 (11) 99999-9999'' → ''11999999999''.';

/**
 * Whether a normalised phone is a Brazilian number: a two-digit area code without zeros, then a
 * 9-digit mobile number starting with 9 or an 8-digit landline starting with 2 to 5.
 */
create function portal_private.is_valid_phone(_value text)
returns boolean
language sql
immutable
set search_path = ''
as $$
  select coalesce(_value ~ '^[1-9]{2}(9[0-9]{8}|[2-5][0-9]{7})$', false);
$$;
comment on function portal_private.is_valid_phone(text) is
  'True for area code + 9-digit mobile (9xxxxxxxx) or 8-digit landline (2-5xxxxxxx).';

/** A CEP reduced to its digits: '01001-000' → '01001000'. */
create function portal_private.normalize_postal_code(_value text)
returns text
language sql
immutable
strict
set search_path = ''
as $$
  select regexp_replace(_value, '[.\s-]', '', 'g');
$$;
comment on function portal_private.normalize_postal_code(text) is
  'CEP without hyphen, dots or spaces.';

/** Whether a normalised CEP has the 8-digit format (00000000 is never assigned). */
create function portal_private.is_valid_postal_code(_value text)
returns boolean
language sql
immutable
set search_path = ''
as $$
  select coalesce(_value ~ '^[0-9]{8}$' and _value <> '00000000', false);
$$;
comment on function portal_private.is_valid_postal_code(text) is
  'True for an 8-digit CEP other than 00000000. Existence is checked by the postal-code-lookup function.';

grant execute on function
  portal_private.normalize_cnpj(text),
  portal_private.cnpj_check_digit(text),
  portal_private.is_valid_cnpj(text),
  portal_private.is_valid_email(text),
  portal_private.normalize_phone(text),
  portal_private.is_valid_phone(text),
  portal_private.normalize_postal_code(text),
  portal_private.is_valid_postal_code(text)
to authenticated, service_role;

-- Nothing in portal_private is callable by PUBLIC (see the foundation migration).
revoke execute on all functions in schema portal_private from public;
