import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { PortalError } from "./errors.ts";
import { forwardedFor, jsonHandler, jsonResponse, readJsonBody, requireMethod } from "./http.ts";

const post = (body: string) => new Request("http://local/fn", { method: "POST", body, headers: { "content-type": "application/json" } });

describe("jsonHandler", () => {
  it("answers preflights itself", async () => {
    const response = await jsonHandler("t", async () => jsonResponse({}))(new Request("http://local/fn", { method: "OPTIONS" }));
    expect(response.status).toBe(204);
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
  });
  it("turns a PortalError into its JSON answer", async () => {
    const response = await jsonHandler("t", async () => {
      throw new PortalError(409, "conflict_here", "Already done", { id: 1 });
    })(post("{}"));
    expect(response.status).toBe(409);
    expect(await response.json()).toEqual({ error: { code: "conflict_here", message: "Already done", details: { id: 1 } } });
  });
  it("hides unexpected errors behind a logged 500", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    const response = await jsonHandler("t", async () => {
      throw new Error("secret internals");
    })(post("{}"));
    expect(response.status).toBe(500);
    expect(await response.text()).not.toContain("secret internals");
    expect(log).toHaveBeenCalledWith(expect.stringContaining('"event":"unhandled_error"'));
    log.mockRestore();
  });
});

describe("readJsonBody and requireMethod", () => {
  const schema = z.object({ id: z.uuid() });

  it("returns the parsed body", async () => {
    expect(await readJsonBody(post('{"id":"5e3d0000-0000-4000-8000-000000000001"}'), schema)).toEqual({ id: "5e3d0000-0000-4000-8000-000000000001" });
  });
  it("says invalid_json for a body that is not JSON and invalid_body with the field for a wrong one", async () => {
    await expect(readJsonBody(post("{"), schema)).rejects.toMatchObject({ status: 400, code: "invalid_json" });
    await expect(readJsonBody(post('{"id":"x"}'), schema)).rejects.toMatchObject({ status: 400, code: "invalid_body", details: [{ path: "id" }] });
  });
  it("refuses other methods with 405 and lists the allowed ones", async () => {
    expect(() => requireMethod(new Request("http://local/fn"), "POST")).toThrow(expect.objectContaining({ status: 405 }));
    const response = await jsonHandler("t", async (request) => {
      requireMethod(request, "GET", "POST");
      return jsonResponse({});
    })(new Request("http://local/fn", { method: "DELETE" }));
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("GET, POST");
  });
});

describe("forwardedFor", () => {
  it("takes the first address the gateway forwarded", () => {
    expect(forwardedFor(new Request("http://local/", { headers: { "x-forwarded-for": "2001:db8::1, 127.0.0.1" } }))).toBe("2001:db8::1");
    expect(forwardedFor(new Request("http://local/"))).toBeNull();
  });
});
