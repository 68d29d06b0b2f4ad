import { describe, expect, it } from "vitest";
import { errorInWords } from "../../platform/dashboard/errors.ts";

describe("errorInWords", () => {
  it("says what a PostgREST error's Postgres code means, with its message and details", () => {
    expect(errorInWords({ code: "23505", message: 'duplicate key value violates unique constraint "cidades_pkey"', details: "Key (id)=(x) already exists.", hint: null }, 409))
      .toBe('A row with this value already exists (unique constraint): duplicate key value violates unique constraint "cidades_pkey" Key (id)=(x) already exists.');
    expect(errorInWords({ code: "42501", message: "new row violates row-level security policy" }, 403))
      .toBe("Refused by row-level security or missing privileges: new row violates row-level security policy");
  });

  it("reads the auth, storage, functions and gamification shapes, keeping an unknown code", () => {
    expect(errorInWords({ code: "email_exists", msg: "A user with this email address has already been registered" }, 422))
      .toBe("A user with this email address has already been registered (email_exists)");
    expect(errorInWords({ statusCode: "409", error: "Duplicate", message: "The resource already exists" }, 409)).toBe("The resource already exists");
    expect(errorInWords({ error: "Workflow not found", code: "NOT_FOUND" }, 404)).toBe("Workflow not found (NOT_FOUND)");
    expect(errorInWords({ success: false, error: { codigo: "CIDADE_NAO_ENCONTRADA", mensagem: "Cidade não encontrada: x." } }, 404))
      .toBe("Cidade não encontrada: x. (CIDADE_NAO_ENCONTRADA)");
  });

  it("falls back to the status for an empty or unreadable answer", () => {
    expect(errorInWords(null, 502)).toBe("The request failed (HTTP 502)");
    expect(errorInWords("Bad Gateway", 502)).toBe("Bad Gateway (HTTP 502)");
  });
});
