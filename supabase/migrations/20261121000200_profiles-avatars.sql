-- Avatars: a public bucket of profile pictures, the files behind the avatar_url fields of
-- technicians (gamification) and profiles (portal). Everyone may read them; each signed-in user
-- writes only inside the folder named by their own user id, e.g. avatars/<uid>/avatar.png.

insert into storage.buckets (id, name, public, file_size_limit, allowed_mime_types)
values ('avatars', 'avatars', true, 2 * 1024 * 1024, array['image/png', 'image/jpeg', 'image/webp'])
on conflict (id) do nothing;

create policy "Anyone can read avatars" on storage.objects
  for select to anon, authenticated
  using (bucket_id = 'avatars');

create policy "Users can upload an avatar into their own folder" on storage.objects
  for insert to authenticated
  with check (bucket_id = 'avatars' and (storage.foldername(name))[1] = (select auth.uid())::text);

create policy "Users can replace the avatars in their own folder" on storage.objects
  for update to authenticated
  using (bucket_id = 'avatars' and (storage.foldername(name))[1] = (select auth.uid())::text)
  with check (bucket_id = 'avatars' and (storage.foldername(name))[1] = (select auth.uid())::text);

create policy "Users can delete the avatars in their own folder" on storage.objects
  for delete to authenticated
  using (bucket_id = 'avatars' and (storage.foldername(name))[1] = (select auth.uid())::text);
