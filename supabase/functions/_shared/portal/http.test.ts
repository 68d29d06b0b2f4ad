import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { HttpError } from "../http/errors.ts";
import { uuidSchema } from "../http/uuid.ts";
import { jsonResponse } from "./errors.ts";
import { forwardedFor, readJsonBody, servePortalFunction } from "./http.ts";

const post = (body: BodyInit, headers: Record<string, string> = { "content-type": "application/json" }) => new Request("http://local/fn", { method: "POST", body, headers });

describe("servePortalFunction", () => {
  it("answers preflights itself", async () => {
    const response = await servePortalFunction("t", ["POST"], async () => jsonResponse({}))(new Request("http://local/fn", { method: "OPTIONS" }));
    expect(response.status).toBe(204);
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
  });
  it("turns an HttpError into its JSON answer, with the CORS headers", async () => {
    const response = await servePortalFunction("t", ["POST"], async () => {
      throw new HttpError(409, "conflict_here", "Already done", { id: 1 });
    })(post("{}"));
    expect(response.status).toBe(409);
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
    expect(await response.json()).toEqual({ error: { code: "conflict_here", message: "Already done", details: { id: 1 } } });
  });
  it("hides unexpected errors behind a logged 500", async () => {
    const log = vi.spyOn(console, "error").mockImplementation(() => {});
    const response = await servePortalFunction("t", ["POST"], async () => {
      throw new Error("secret internals");
    })(post("{}"));
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({ error: { code: "internal_error", message: "Something went wrong on our side" } });
    expect(log).toHaveBeenCalledWith(expect.stringContaining('"message":"unhandled_error"'));
    expect(log).toHaveBeenCalledWith(expect.stringContaining('"function":"t"'));
    log.mockRestore();
  });
  it("refuses other methods with 405 in the portal's envelope and lists the allowed ones", async () => {
    const response = await servePortalFunction("t", ["GET", "POST"], async () => jsonResponse({}))(new Request("http://local/fn", { method: "DELETE" }));
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("GET, POST");
    expect((await response.json()).error.code).toBe("method_not_allowed");
  });
});

describe("readJsonBody", () => {
  const schema = z.object({ id: uuidSchema() });

  it("returns the parsed body, labelled or not", async () => {
    expect(await readJsonBody(post('{"id":"5e3d0000-0000-4000-8000-000000000001"}'), schema)).toEqual({ id: "5e3d0000-0000-4000-8000-000000000001" });
    expect(await readJsonBody(post('{"id":"402a8bf1-ec9a-c693-0f4a-5d1e7c2b9a10"}', {}), schema)).toEqual({ id: "402a8bf1-ec9a-c693-0f4a-5d1e7c2b9a10" });
  });
  it("says invalid_json for a body that is not JSON and invalid_body with the field for a wrong one", async () => {
    await expect(readJsonBody(post("{"), schema)).rejects.toMatchObject({ status: 400, code: "invalid_json" });
    await expect(readJsonBody(post('{"id":"x"}'), schema)).rejects.toMatchObject({ status: 400, code: "invalid_body", details: [{ path: "id" }] });
  });
  it("refuses a NUL or bytes that are not UTF-8 with invalid_body, and a huge body with 413", async () => {
    await expect(readJsonBody(post('{"id":"\\u0000"}'), schema)).rejects.toMatchObject({ status: 400, code: "invalid_body", details: [{ path: "id" }] });
    await expect(readJsonBody(post(new Uint8Array([0x22, 0xc3, 0x22])), schema)).rejects.toMatchObject({ status: 400, code: "invalid_body" });
    await expect(readJsonBody(post(JSON.stringify({ id: "x".repeat(100_000) })), schema)).rejects.toMatchObject({ status: 413, code: "body_too_large" });
  });
});

describe("forwardedFor", () => {
  it("takes the first address the gateway forwarded", () => {
    expect(forwardedFor(new Request("http://local/", { headers: { "x-forwarded-for": "2001:db8::1, 127.0.0.1" } }))).toBe("2001:db8::1");
    expect(forwardedFor(new Request("http://local/"))).toBeNull();
  });
});
