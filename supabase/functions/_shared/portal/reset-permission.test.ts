import { describe, expect, it } from "vitest";
import type { AppRole } from "./caller.ts";
import { decidePasswordReset } from "./reset-permission.ts";

const roles = (...names: AppRole[]) => new Set<AppRole>(names);

describe("decidePasswordReset", () => {
  it("lets admins reset technicians, other admins and users without role", () => {
    expect(decidePasswordReset(roles("admin"), roles("technician"))).toEqual({ allowed: true });
    expect(decidePasswordReset(roles("admin"), roles("admin"))).toEqual({ allowed: true });
    expect(decidePasswordReset(roles("admin"), roles())).toEqual({ allowed: true });
  });
  it("keeps super admins' passwords for super admins", () => {
    expect(decidePasswordReset(roles("admin"), roles("super_admin"))).toMatchObject({ allowed: false, code: "target_is_super_admin" });
    expect(decidePasswordReset(roles("admin", "technician"), roles("super_admin", "admin"))).toMatchObject({ allowed: false, code: "target_is_super_admin" });
    expect(decidePasswordReset(roles("super_admin"), roles("super_admin"))).toEqual({ allowed: true });
  });
  it("refuses everyone else", () => {
    expect(decidePasswordReset(roles("technician"), roles("technician"))).toMatchObject({ allowed: false, code: "not_an_admin" });
    expect(decidePasswordReset(roles(), roles())).toMatchObject({ allowed: false, code: "not_an_admin" });
  });
});
