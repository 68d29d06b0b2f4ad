import { describe, expect, it } from "vitest";
import { anonClient } from "../helpers/clients.ts";

/**
 * The authentication calls the portal uses (sign in with e-mail and password, read the current
 * user, sign out) with the seeded local accounts documented in docs/proposals-portal.md.
 */
const SEEDED = [
  { email: "superadmin@orbita.local", name: "Diego Rocha", role: "super_admin" },
  { email: "admin@orbita.local", name: "Carla Mendes", role: "admin" },
  { email: "ana.souza@orbita.local", name: "Ana Souza", role: "technician" },
  { email: "bruno.lima@orbita.local", name: "Bruno Lima", role: "technician" },
] as const;
const PASSWORD = "Orbita#2026";

describe("seeded accounts", () => {
  it.each(SEEDED)("$email signs in, reads itself and its profile and role, and signs out", async ({ email, name, role }) => {
    const client = anonClient();
    const signIn = await client.auth.signInWithPassword({ email, password: PASSWORD });
    expect(signIn.error).toBeNull();
    const userId = signIn.data.user?.id ?? "";

    const current = await client.auth.getUser();
    expect(current.data.user?.email).toBe(email);

    const profile = await client.from("profiles").select("full_name").eq("user_id", userId).single();
    expect(profile.data).toEqual({ full_name: name });
    expect((await client.rpc("has_role", { _user_id: userId, _role: role })).data).toBe(true);

    expect((await client.auth.signOut()).error).toBeNull();
    expect((await client.auth.getSession()).data.session).toBeNull();
  });

  it("a wrong password is refused with the spec's message", async () => {
    const { data, error } = await anonClient().auth.signInWithPassword({ email: "ana.souza@orbita.local", password: "wrong-password" });
    expect(data.session).toBeNull();
    expect(error?.message).toBe("Invalid login credentials");
    expect(error?.status).toBe(400);
    expect(error?.code).toBe("invalid_credentials");
  });

  it("seeded technicians see their seeded customers and proposals in several states", async () => {
    const client = anonClient();
    await client.auth.signInWithPassword({ email: "ana.souza@orbita.local", password: PASSWORD });
    const { data } = await client.from("proposals").select("status").order("code");
    const states = new Set((data ?? []).map((row) => row.status as string));
    for (const status of ["pending", "approved", "active", "rejected"]) expect(states.has(status)).toBe(true);
    const customers = await client.from("customers").select("company_name").order("company_name");
    expect(customers.data?.length).toBeGreaterThanOrEqual(2);
  });
});
