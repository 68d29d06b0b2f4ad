-- Local validators of the proposals portal: CNPJ (numeric and 2026 alphanumeric, check digits),
-- e-mail, Brazilian phone and CEP, plus their normalisation.
begin;
select plan(36);

select is(portal_private.normalize_cnpj('11.222.333/0001-81'), '11222333000181', 'The CNPJ mask is removed');
select is(portal_private.normalize_cnpj(' 12.abc.345/01de-35 '), '12ABC34501DE35', 'Alphanumeric CNPJs are upper-cased and unmasked');
select is(portal_private.cnpj_check_digit('112223330001'), 8, 'First check digit of 11.222.333/0001 is 8 (weighted sum 102)');
select is(portal_private.cnpj_check_digit('1122233300018'), 1, 'Second check digit of 11.222.333/0001-8 is 1 (weighted sum 120)');
select is(portal_private.cnpj_check_digit('12ABC34501DE'), 3, 'First check digit of the SERPRO example 12.ABC.345/01DE is 3 (letters worth ASCII − 48)');
select is(portal_private.cnpj_check_digit('12ABC34501DE3'), 5, 'Second check digit of the SERPRO example is 5');
select ok(portal_private.is_valid_cnpj('11222333000181'), 'A valid numeric CNPJ passes');
select ok(portal_private.is_valid_cnpj('00000000000191'), 'A valid CNPJ with leading zeros passes (00.000.000/0001-91)');
select ok(portal_private.is_valid_cnpj('12ABC34501DE35'), 'The official alphanumeric example passes');
select ok(not portal_private.is_valid_cnpj('11222333000180'), 'A wrong second check digit fails');
select ok(not portal_private.is_valid_cnpj('11222333000191'), 'A wrong first check digit fails');
select ok(not portal_private.is_valid_cnpj('12ABC34501DE53'), 'Swapped alphanumeric check digits fail');
select ok(not portal_private.is_valid_cnpj('11111111111111'), 'A repeated digit fails even though mod-11 accepts it');
select ok(not portal_private.is_valid_cnpj('00000000000000'), 'All zeros fail');
select ok(not portal_private.is_valid_cnpj('1122233300018'), 'Thirteen characters fail');
select ok(not portal_private.is_valid_cnpj('112223330001811'), 'Fifteen characters fail');
select ok(not portal_private.is_valid_cnpj('12ABC34501DEAB'), 'Letters in the check-digit positions fail');
select ok(not portal_private.is_valid_cnpj('12abc34501de35'), 'Lower-case letters fail unless normalised first');
select ok(not portal_private.is_valid_cnpj('11.222.333/0001-81'), 'A masked value is not a normalised CNPJ');
select ok(not portal_private.is_valid_cnpj(null), 'Null is not a valid CNPJ');

select ok(portal_private.is_valid_email('ana.souza+vendas@empresa.com.br'), 'A usual e-mail passes');
select ok(not portal_private.is_valid_email('ana@localhost'), 'An e-mail without a dotted domain fails');
select ok(not portal_private.is_valid_email('ana souza@empresa.com'), 'An e-mail with a space fails');
select ok(not portal_private.is_valid_email('@empresa.com'), 'An e-mail without a local part fails');
select ok(not portal_private.is_valid_email(repeat('a', 250) || '@x.com'), 'An e-mail over 254 characters fails');

select is(portal_private.normalize_phone('+55 (11) 99999-9999'), '11999999999', 'Country code and punctuation are removed from phones');
select is(portal_private.normalize_phone('(21) 3333-4444'), '2133334444', 'A landline keeps area code and 8 digits');
select ok(portal_private.is_valid_phone('11999999999'), 'A mobile with area code passes');
select ok(portal_private.is_valid_phone('2133334444'), 'A landline with area code passes');
select ok(not portal_private.is_valid_phone('1199999999'), 'A 10-digit number starting with 9 after the area code fails (mobiles have 9 digits)');
select ok(not portal_private.is_valid_phone('01999999999'), 'An area code with a zero fails');
select ok(not portal_private.is_valid_phone('999999999'), 'A number without area code fails');

select is(portal_private.normalize_postal_code('01001-000'), '01001000', 'The CEP hyphen is removed');
select ok(portal_private.is_valid_postal_code('01001000'), 'An 8-digit CEP passes');
select ok(not portal_private.is_valid_postal_code('0100100'), 'A 7-digit CEP fails');
select ok(not portal_private.is_valid_postal_code('00000000'), 'CEP 00000000 fails');

select * from finish();
rollback;
