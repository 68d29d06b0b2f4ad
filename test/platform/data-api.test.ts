import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { signHs256 } from "../../platform/keys/api-keys.ts";
import { anonClient, createTestUser, serviceClient, type TestUser } from "../helpers/clients.ts";
import { env } from "../helpers/env.ts";

describe("data API (PostgREST 12 behind the gateway) with supabase-js", () => {
  let ana: TestUser;
  let bruno: TestUser;
  const names = { anaPrivate: `ana-private-${randomUUID()}`, anaPublic: `ana-public-${randomUUID()}`, bruno: `bruno-${randomUUID()}` };

  beforeAll(async () => {
    [ana, bruno] = await Promise.all([createTestUser(), createTestUser()]);
    const inserted = await ana.client.from("demo_projects").insert([{ name: names.anaPrivate, is_public: false }, { name: names.anaPublic, is_public: true }]).select("id, name");
    expect(inserted.error).toBeNull();
    const anaPublic = inserted.data?.find((row) => row.name === names.anaPublic);
    expect((await ana.client.from("demo_tasks").insert({ project_id: anaPublic?.id, title: "first" })).error).toBeNull();
    expect((await bruno.client.from("demo_projects").insert({ name: names.bruno })).error).toBeNull();
  });

  it("lets anon see only public projects", async () => {
    const { data, error } = await anonClient().from("demo_projects").select("name").in("name", Object.values(names));
    expect(error).toBeNull();
    expect(data?.map((row) => row.name)).toEqual([names.anaPublic]);
  });

  it("lets a signed-in user see public projects and their own, not another user's", async () => {
    const { data } = await bruno.client.from("demo_projects").select("name").in("name", Object.values(names)).order("name");
    expect(data?.map((row) => row.name).sort()).toEqual([names.anaPublic, names.bruno].sort());
  });

  it("lets the service role see everything", async () => {
    const { data } = await serviceClient().from("demo_projects").select("name").in("name", Object.values(names));
    expect(data).toHaveLength(3);
  });

  it("embeds a related table as an array on the one-to-many side and an object on the many-to-one side", async () => {
    const projects = await anonClient().from("demo_projects").select("name, demo_tasks(title)").eq("name", names.anaPublic).single();
    expect(projects.error).toBeNull();
    expect(projects.data).toEqual({ name: names.anaPublic, demo_tasks: [{ title: "first" }] });
    const tasks = await anonClient().from("demo_tasks").select("title, demo_projects(name)").eq("title", "first").limit(1).single();
    expect(tasks.data).toEqual({ title: "first", demo_projects: { name: names.anaPublic } });
  });

  it("answers an insert with 201", async () => {
    const result = await ana.client.from("demo_projects").insert({ name: `created-${randomUUID()}` });
    expect(result).toMatchObject({ status: 201, error: null, data: null });
  });

  it("calls a function through rpc, with RLS applied to what it reads", async () => {
    const asAnon = await anonClient().rpc("demo_visible_project_count");
    const asService = await serviceClient().rpc("demo_visible_project_count");
    expect(asAnon.error).toBeNull();
    expect(typeof asAnon.data).toBe("number");
    expect(asService.data as number).toBeGreaterThan(asAnon.data as number);
  });

  it("answers single() on no rows with 406 PGRST116", async () => {
    const result = await anonClient().from("demo_projects").select("id").eq("name", "no such project").single();
    expect(result.status).toBe(406);
    expect(result.error).toMatchObject({ code: "PGRST116", message: "JSON object requested, multiple (or no) rows returned" });
  });

  it("answers a duplicate key with 409 23505 and writes nothing", async () => {
    const result = await bruno.client.from("demo_projects").insert({ name: names.bruno });
    expect(result.status).toBe(409);
    expect(result.error?.code).toBe("23505");
    const { count } = await serviceClient().from("demo_projects").select("id", { count: "exact", head: true }).eq("name", names.bruno);
    expect(count).toBe(1);
  });

  it("refuses an insert RLS denies with 42501: 403 for a user, 401 for anon", async () => {
    const asUser = await bruno.client.from("demo_projects").insert({ name: `forged-${randomUUID()}`, owner_id: ana.id });
    expect(asUser.status).toBe(403);
    expect(asUser.error?.code).toBe("42501");
    expect(asUser.error?.message).toContain('new row violates row-level security policy for table "demo_projects"');
    const asAnon = await anonClient().from("demo_tasks").insert({ project_id: randomUUID(), title: "nope" });
    expect(asAnon.status).toBe(401);
    expect(asAnon.error?.code).toBe("42501");
  });

  it("refuses an expired JWT with 401 PGRST301", async () => {
    const expired = signHs256({ sub: ana.id, role: "authenticated", aud: "authenticated", exp: Math.floor(Date.now() / 1000) - 120 }, env.jwtSecret);
    const response = await fetch(`${env.url}/rest/v1/demo_projects?select=id`, {
      headers: { apikey: env.anonKey, authorization: `Bearer ${expired}` },
    });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ code: "PGRST301", message: "JWT expired" });
  });

  it("accepts the publishable and secret keys in place of the JWT keys", async () => {
    const asPublishable = await fetch(`${env.url}/rest/v1/demo_projects?select=name&name=eq.${names.bruno}`, { headers: { apikey: env.publishableKey } });
    expect(await asPublishable.json()).toEqual([]);
    const asSecret = await fetch(`${env.url}/rest/v1/demo_projects?select=name&name=eq.${names.bruno}`, { headers: { apikey: env.secretKey } });
    expect(await asSecret.json()).toEqual([{ name: names.bruno }]);
  });

  it("refuses an update or delete without a filter with 400 21000, as pg-safeupdate does on hosted projects", async () => {
    const result = await ana.client.from("demo_projects").update({ is_public: true });
    expect(result.status).toBe(400);
    expect(result.error).toMatchObject({ code: "21000", message: "UPDATE requires a WHERE clause" });
    const { count } = await serviceClient().from("demo_projects").select("id", { count: "exact", head: true }).eq("name", names.anaPrivate).eq("is_public", false);
    expect(count).toBe(1);
  });
});
