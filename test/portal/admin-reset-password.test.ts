import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { anonClient, serviceClient, type TestUser } from "../helpers/clients.ts";
import { env } from "../helpers/env.ts";
import { callFunction, createPortalUser } from "./factories.ts";

/**
 * admin-reset-password: admins only, a super admin's password only by a super admin, the password
 * policy enforced, every reset audited, and the new password really works.
 */
let technician: TestUser;
let otherTechnician: TestUser;
let admin: TestUser;
let superAdmin: TestUser;
let otherSuperAdmin: TestUser;

beforeAll(async () => {
  [technician, otherTechnician, admin, superAdmin, otherSuperAdmin] = await Promise.all([
    createPortalUser("Ana Senha", "technician"),
    createPortalUser("Bruno Senha", "technician"),
    createPortalUser("Carla Senha", "admin"),
    createPortalUser("Diego Senha", "super_admin"),
    createPortalUser("Elisa Senha", "super_admin"),
  ]);
});

async function reset(caller: string | undefined, body: unknown): Promise<{ status: number; body: { error?: { code: string; details?: { code: string }[] }; userId?: string; passwordReset?: boolean } }> {
  const response = await callFunction("admin-reset-password", { token: caller, body });
  return { status: response.status, body: (await response.json()) as { userId?: string } };
}

async function signsIn(email: string, password: string): Promise<boolean> {
  return (await anonClient().auth.signInWithPassword({ email, password })).error === null;
}

describe("admin-reset-password", () => {
  it("resets the password of a user whose id is a valid Postgres UUID but not RFC 9562, who then signs in and is let in", async () => {
    // Version nibble c and variant nibble 0: Postgres stores it; an RFC validator refuses it (the gamification seed's ids).
    const hex = randomUUID().replace(/-/g, "");
    const id = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-c${hex.slice(13, 16)}-0${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
    const email = `seed-like-${hex}@example.test`;
    const created = await serviceClient().auth.admin.createUser({ id, email, password: "Antiga-Senha-2026", email_confirm: true });
    expect(created.error).toBeNull();
    const result = await reset(admin.accessToken, { userId: id, newPassword: "Nova-Senha-2026" });
    expect(result).toEqual({ status: 200, body: { userId: id, passwordReset: true } });
    const session = await anonClient().auth.signInWithPassword({ email, password: "Nova-Senha-2026" });
    expect(session.error).toBeNull();
    // Signed in, the user is a caller like any other: 404 for a proposal that does not exist, not 401.
    const pdf = await callFunction("generate-proposal-pdf", { token: session.data.session!.access_token, body: { proposalId: randomUUID() } });
    expect([pdf.status, ((await pdf.json()) as { error: { code: string } }).error.code]).toEqual([404, "proposal_not_found"]);
  });

  it("an admin resets a technician's password: the new one works, the old one no longer does", async () => {
    const result = await reset(admin.accessToken, { userId: technician.id, newPassword: "Nova-Senha-2026" });
    expect(result).toEqual({ status: 200, body: { userId: technician.id, passwordReset: true } });
    expect(await signsIn(technician.email, "Nova-Senha-2026")).toBe(true);
    expect(await signsIn(technician.email, technician.password)).toBe(false);
  });
  it("the reset is in the audit log with the admin as actor", async () => {
    const { data } = await serviceClient().from("audit_log").select("action, actor_id, entity_type").eq("entity_id", technician.id).eq("action", "user.password_reset");
    expect(data).toEqual([{ action: "user.password_reset", actor_id: admin.id, entity_type: "user" }]);
  });
  it("an admin cannot reset a super admin's password (403) and it keeps working", async () => {
    const result = await reset(admin.accessToken, { userId: superAdmin.id, newPassword: "Tomada-De-Conta-1" });
    expect(result.status).toBe(403);
    expect(result.body.error?.code).toBe("target_is_super_admin");
    expect(await signsIn(superAdmin.email, superAdmin.password)).toBe(true);
  });
  it("a super admin can reset another super admin's and an admin's password", async () => {
    expect((await reset(superAdmin.accessToken, { userId: otherSuperAdmin.id, newPassword: "Super-Nova-2026" })).status).toBe(200);
    expect(await signsIn(otherSuperAdmin.email, "Super-Nova-2026")).toBe(true);
    expect((await reset(superAdmin.accessToken, { userId: admin.id, newPassword: "Admin-Nova-2026" })).status).toBe(200);
  });
  it("a technician cannot reset anyone's password (403)", async () => {
    const result = await reset(otherTechnician.accessToken, { userId: technician.id, newPassword: "Invasao-2026-X" });
    expect(result.status).toBe(403);
    expect(result.body.error?.code).toBe("not_an_admin");
  });
  it("a weak password is 422 with every broken rule", async () => {
    const result = await reset(superAdmin.accessToken, { userId: otherTechnician.id, newPassword: "curta" });
    expect(result.status).toBe(422);
    expect(result.body.error?.code).toBe("weak_password");
    expect(result.body.error?.details?.map((problem) => problem.code)).toEqual(["too_short", "missing_uppercase", "missing_digit"]);
    expect(await signsIn(otherTechnician.email, otherTechnician.password)).toBe(true);
  });
  it("an unknown user is 404, a malformed body 400, no user token 401", async () => {
    expect((await reset(superAdmin.accessToken, { userId: "5e3d9999-0000-4000-8000-000000000000", newPassword: "Valida-Mas-Sem-Dono-1" })).status).toBe(404);
    expect((await reset(superAdmin.accessToken, { userId: "x", newPassword: "Valida-2026-ok" })).status).toBe(400);
    expect((await reset(env.anonKey, { userId: technician.id, newPassword: "Valida-2026-ok" })).status).toBe(401);
  });
});
