import { afterEach, describe, expect, it, vi } from "vitest";
import { approvalLink } from "./approval-link.ts";

describe("approvalLink", () => {
  afterEach(() => vi.unstubAllEnvs());

  it("points at the approve-proposal function by default", () => {
    vi.stubEnv("SUPABASE_URL", "http://127.0.0.1:54321");
    vi.stubEnv("PORTAL_APPROVAL_URL", "");
    expect(approvalLink("abc_-123")).toBe("http://127.0.0.1:54321/functions/v1/approve-proposal?token=abc_-123");
  });
  it("uses PORTAL_APPROVAL_URL when set, keeping its own query", () => {
    vi.stubEnv("PORTAL_APPROVAL_URL", "https://portal.example.com/aprovar?lang=pt");
    expect(approvalLink("t0k3n")).toBe("https://portal.example.com/aprovar?lang=pt&token=t0k3n");
  });
  it("encodes whatever the token holds", () => {
    vi.stubEnv("PORTAL_APPROVAL_URL", "https://portal.example.com/aprovar");
    expect(approvalLink("a b&c")).toBe("https://portal.example.com/aprovar?token=a+b%26c");
  });
});
