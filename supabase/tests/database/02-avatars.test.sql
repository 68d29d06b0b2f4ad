-- The avatars bucket's policies on storage.objects.
begin;
select plan(8);

insert into auth.users (id, email, aud, role) values
  ('a1a1a1a1-0000-4000-8000-000000000001', 'ana@avatars.test', 'authenticated', 'authenticated'),
  ('b2b2b2b2-0000-4000-8000-000000000002', 'bia@avatars.test', 'authenticated', 'authenticated');

select is((select public from storage.buckets where id = 'avatars'), true, 'The avatars bucket is public');

set local role authenticated;
set local request.jwt.claims = '{"sub": "a1a1a1a1-0000-4000-8000-000000000001", "role": "authenticated"}';
select lives_ok(
  $$insert into storage.objects (bucket_id, name, owner_id) values ('avatars', 'a1a1a1a1-0000-4000-8000-000000000001/avatar.png', 'a1a1a1a1-0000-4000-8000-000000000001')$$,
  'A user can upload an avatar into their own folder');
select throws_ok(
  $$insert into storage.objects (bucket_id, name) values ('avatars', 'b2b2b2b2-0000-4000-8000-000000000002/avatar.png')$$,
  '42501', null, 'A user cannot upload into another user''s folder');
select throws_ok(
  $$insert into storage.objects (bucket_id, name) values ('avatars', 'avatar.png')$$,
  '42501', null, 'A user cannot upload outside any user folder');

set local request.jwt.claims = '{"sub": "b2b2b2b2-0000-4000-8000-000000000002", "role": "authenticated"}';
update storage.objects set metadata = '{"forged": true}' where bucket_id = 'avatars';
select is(
  (select metadata from storage.objects where name = 'a1a1a1a1-0000-4000-8000-000000000001/avatar.png'), null,
  'A user cannot replace another user''s avatar');
delete from storage.objects where bucket_id = 'avatars';
select is((select count(*)::int from storage.objects where bucket_id = 'avatars'), 1, 'A user cannot delete another user''s avatar');

set local role anon;
set local request.jwt.claims = '{"role": "anon"}';
select is((select count(*)::int from storage.objects where bucket_id = 'avatars'), 1, 'Anyone can read avatars');
select throws_ok(
  $$insert into storage.objects (bucket_id, name) values ('avatars', 'a1a1a1a1-0000-4000-8000-000000000001/x.png')$$,
  '42501', null, 'A signed-out visitor cannot upload avatars');

select * from finish();
rollback;
