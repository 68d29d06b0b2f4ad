import bcrypt from "bcryptjs";
import { describe, expect, it } from "vitest";
import { AuthError } from "./errors.ts";
import { checkPasswordStrength, hashPassword, randomPassword, verifyPassword } from "./passwords.ts";
import type { AuthSettings } from "./settings.ts";

const settings = { minimumPasswordLength: 6, requiredCharacters: [] as string[] } as AuthSettings;

describe("passwords", () => {
  it("are hashed as GoTrue stores them ($2a$, cost 10) and verify", async () => {
    const hash = await hashPassword("correct horse");
    expect(hash).toMatch(/^\$2a\$10\$[./A-Za-z0-9]{53}$/);
    expect(await verifyPassword("correct horse", hash)).toBe(true);
    expect(await verifyPassword("wrong horse", hash)).toBe(false);
  });

  it("verify pgcrypto's cost-6 hashes and refuse non-bcrypt or empty stored values", async () => {
    const pgcryptoStyle = bcrypt.hashSync("seeded", bcrypt.genSaltSync(6)).replace(/^\$2b\$/, "$2a$");
    expect(await verifyPassword("seeded", pgcryptoStyle)).toBe(true);
    expect(await verifyPassword("seeded", "")).toBe(false);
    expect(await verifyPassword("seeded", null)).toBe(false);
    expect(await verifyPassword("seeded", "$argon2id$v=19$m=65536,t=2,p=1$abc$def")).toBe(false);
  });

  it("that are too short are weak_password with reason length; too long is validation_failed", () => {
    expect(() => checkPasswordStrength("12345", settings)).toThrow(expect.objectContaining({ status: 422, code: "weak_password", reasons: ["length"] }));
    expect(() => checkPasswordStrength("123456", settings)).not.toThrow();
    expect(() => checkPasswordStrength("x".repeat(73), settings)).toThrow(expect.objectContaining({ status: 400, code: "validation_failed" }));
    // Length is counted in bytes: three 2-byte characters make six.
    expect(() => checkPasswordStrength("ããã", settings)).not.toThrow();
  });

  it("with a control character are validation_failed (400), however strong otherwise", () => {
    for (const password of ["\u0000Abcdefgh12", "Abc\tdefgh12", "Abcdefgh12\n", "Abc\u001bdefgh12", "Abcdefgh12\u007f", "Abc\u0085defgh12"]) {
      expect(() => checkPasswordStrength(password, settings)).toThrow(
        expect.objectContaining({ status: 400, code: "validation_failed", message: "Password cannot contain control characters" }),
      );
    }
    // Spaces, accents, symbols and emoji are not control characters.
    expect(() => checkPasswordStrength("Ação segura #9 🚀", settings)).not.toThrow();
  });

  it("must touch every required character set when password_requirements asks for it", () => {
    const strict = { ...settings, requiredCharacters: ["abcdefghijklmnopqrstuvwxyz", "0123456789"] } as AuthSettings;
    let error: unknown;
    try {
      checkPasswordStrength("onlyletters", strict);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(AuthError);
    expect((error as AuthError).reasons).toEqual(["characters"]);
    expect(() => checkPasswordStrength("letters123", strict)).not.toThrow();
  });

  it("generated for admin-created users are 64 characters with 10 digits", () => {
    const generated = randomPassword();
    expect(generated).toHaveLength(64);
    expect(generated.replace(/\D/g, "")).toHaveLength(10);
    expect(randomPassword()).not.toBe(generated);
  });
});
