import { describe, expect, it } from "vitest";
import { AuthError, errorResponse, OAuthError, wantsVersionedErrors } from "./errors.ts";

const versioned = new Request("http://auth/x", { headers: { "X-Supabase-Api-Version": "2024-01-01" } });
const legacy = new Request("http://auth/x");

describe("error responses", () => {
  it("use {code, message} and echo the API version for auth-js, the legacy shape otherwise", async () => {
    const error = new AuthError(400, "invalid_credentials", "Invalid login credentials");
    const modern = errorResponse(error, versioned);
    expect(modern.status).toBe(400);
    expect(modern.headers.get("x-supabase-api-version")).toBe("2024-01-01");
    expect(modern.headers.get("x-sb-error-code")).toBe("invalid_credentials");
    expect(await modern.json()).toEqual({ code: "invalid_credentials", message: "Invalid login credentials" });

    const old = errorResponse(error, legacy);
    expect(old.headers.get("x-supabase-api-version")).toBeNull();
    expect(await old.json()).toEqual({ code: 400, error_code: "invalid_credentials", msg: "Invalid login credentials" });
  });

  it("carry weak_password.reasons, which auth-js turns into AuthWeakPasswordError", async () => {
    const response = errorResponse(new AuthError(422, "weak_password", "Password should be at least 6 characters.", ["length"]), versioned);
    expect(await response.json()).toEqual({ code: "weak_password", message: "Password should be at least 6 characters.", weak_password: { reasons: ["length"] } });
  });

  it("hide unexpected failures behind GoTrue's generic 500", async () => {
    const response = errorResponse(new Error("connection refused"), versioned);
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({ code: "unexpected_failure", message: "Unexpected failure, please check server logs for more information" });
  });

  it("keep the OAuth shape for OAuth errors", async () => {
    const response = errorResponse(new OAuthError("invalid_request", "refresh_token required"), versioned);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: "invalid_request", error_description: "refresh_token required" });
  });

  it("select the versioned format only for valid dates from 2024-01-01 on", () => {
    const withVersion = (value: string) => new Request("http://auth/x", { headers: { "X-Supabase-Api-Version": value } });
    expect(wantsVersionedErrors(withVersion("2024-01-01"))).toBe(true);
    expect(wantsVersionedErrors(withVersion("2025-06-30"))).toBe(true);
    expect(wantsVersionedErrors(withVersion("2023-12-31"))).toBe(false);
    expect(wantsVersionedErrors(withVersion("latest"))).toBe(false);
    expect(wantsVersionedErrors(legacy)).toBe(false);
  });
});
