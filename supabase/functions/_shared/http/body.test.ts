import { describe, expect, it } from "vitest";
import { z } from "zod";
import { decodeUtf8, hasNoBody, readBodyBytes, readForm, readJson, readParams, readQuery, validate } from "./body.ts";
import { HttpError, type Problem } from "./errors.ts";

/** Errors that say which problem was found, so each test can check the reader's diagnosis. */
const errors = { describe: (problem: Problem) => new HttpError(400, problem.kind, problem.kind, problem) };
const json = (body: BodyInit | null, headers: Record<string, string> = { "content-type": "application/json" }) =>
  new Request("http://local/x", { method: "POST", body, headers });

function endless(chunk = new Uint8Array(64 * 1024)): { stream: ReadableStream<Uint8Array>; pulled: () => number; cancelled: () => boolean } {
  let pulls = 0;
  let cancelled = false;
  const stream = new ReadableStream<Uint8Array>({
    pull: (controller) => {
      pulls += 1;
      controller.enqueue(chunk);
    },
    cancel: () => {
      cancelled = true;
    },
  });
  return { stream, pulled: () => pulls, cancelled: () => cancelled };
}

describe("readBodyBytes", () => {
  it("refuses from Content-Length alone, without reading", async () => {
    const source = endless();
    const request = new Request("http://local/x", { method: "POST", body: source.stream, headers: { "content-length": "2000000" }, duplex: "half" } as RequestInit);
    await expect(readBodyBytes(request, { errors, maxBytes: 1024 })).rejects.toMatchObject({ code: "body_too_large", details: { limit: 1024 } });
    expect(source.pulled()).toBeLessThanOrEqual(1);
  });

  it("stops reading an endless body once it passes the cap, and cancels it", async () => {
    const source = endless();
    const request = new Request("http://local/x", { method: "POST", body: source.stream, duplex: "half" } as RequestInit);
    await expect(readBodyBytes(request, { errors, maxBytes: 100_000 })).rejects.toMatchObject({ code: "body_too_large" });
    expect(source.pulled()).toBeLessThan(10);
    expect(source.cancelled()).toBe(true);
  });

  it("returns the bytes of a body within the cap, and none for no body", async () => {
    expect(Array.from(await readBodyBytes(json("abc"), { errors, maxBytes: 3 }))).toEqual([97, 98, 99]);
    expect((await readBodyBytes(new Request("http://local/x"), { errors, maxBytes: 3 })).length).toBe(0);
  });
});

describe("decodeUtf8", () => {
  it("refuses bytes that are not UTF-8 instead of replacing them", () => {
    expect(decodeUtf8(new Uint8Array([0xc3, 0xa3]), errors)).toBe("ã");
    for (const bytes of [[0xff], [0xc3], [0xed, 0xa0, 0x80]]) {
      expect(() => decodeUtf8(new Uint8Array(bytes), errors)).toThrow(expect.objectContaining({ code: "unstorable_text" }));
    }
  });
});

describe("hasNoBody", () => {
  it("is true without a body, with Content-Length 0, and with neither a length nor chunked encoding (curl -X POST)", () => {
    expect(hasNoBody(new Request("http://x/", { method: "POST" }))).toBe(true);
    expect(hasNoBody(new Request("http://x/", { method: "POST", body: "", headers: { "content-length": "0" } }))).toBe(true);
    expect(hasNoBody(new Request("http://x/", { method: "POST", body: "" }))).toBe(true);
  });

  it("is false for a body with a length, or sent chunked", () => {
    expect(hasNoBody(new Request("http://x/", { method: "POST", body: "{}", headers: { "content-length": "2" } }))).toBe(false);
    expect(hasNoBody(new Request("http://x/", { method: "POST", body: "{}", headers: { "transfer-encoding": "chunked" } }))).toBe(false);
  });
});

describe("readJson", () => {
  it("parses JSON sent as application/json, with or without a charset", async () => {
    expect(await readJson(json('{"a":1}'), { errors, maxBytes: 100 })).toEqual({ a: 1 });
    expect(await readJson(json('{"a":1}', { "content-type": "Application/JSON; charset=utf-8" }), { errors, maxBytes: 100 })).toEqual({ a: 1 });
  });

  it("refuses another content type unless told to take any", async () => {
    await expect(readJson(json("{}", { "content-type": "text/plain" }), { errors, maxBytes: 100 })).rejects.toMatchObject({ code: "unsupported_media_type" });
    await expect(readJson(json("{}", {}), { errors, maxBytes: 100 })).rejects.toMatchObject({ code: "unsupported_media_type" });
    expect(await readJson(json("{}", { "content-type": "text/plain" }), { errors, maxBytes: 100, contentType: null })).toEqual({});
  });

  it.each([["truncated", '{"a":'], ["empty", ""], ["not JSON", "{nope"]])("refuses %s JSON as malformed", async (_what, body) => {
    await expect(readJson(json(body), { errors, maxBytes: 100 })).rejects.toMatchObject({ code: "malformed_json" });
  });

  it("refuses text Postgres cannot store, naming the field", async () => {
    await expect(readJson(json('{"a":{"b":["ok","x\\u0000"]}}'), { errors, maxBytes: 100 })).rejects.toMatchObject({ code: "unstorable_text", details: { part: "body", field: "a.b.1" } });
    await expect(readJson(json('{"a":"\\ud800"}'), { errors, maxBytes: 100 })).rejects.toMatchObject({ code: "unstorable_text", details: { field: "a" } });
    await expect(readJson(json(new Uint8Array([0x22, 0xff, 0x22])), { errors, maxBytes: 100 })).rejects.toMatchObject({ code: "unstorable_text" });
  });

  it("refuses a body over the cap", async () => {
    await expect(readJson(json(JSON.stringify("x".repeat(200))), { errors, maxBytes: 100 })).rejects.toMatchObject({ code: "body_too_large" });
  });
});

describe("readForm", () => {
  const form = (body: string, type = "application/x-www-form-urlencoded") => new Request("http://local/x", { method: "POST", body, headers: { "content-type": type } });

  it("reads the fields of a form", async () => {
    expect(await readForm(form("email=a%40b.c&action=approve"), { errors, maxBytes: 100 })).toEqual({ email: "a@b.c", action: "approve" });
  });

  it("refuses a field given twice", async () => {
    await expect(readForm(form("email=a%40x.test&action=approve&action=reject"), { errors, maxBytes: 100 })).rejects.toMatchObject({
      code: "invalid_input", details: { part: "body", issues: [expect.objectContaining({ path: ["action"] })] },
    });
  });

  it("refuses another content type, a NUL and an over-long form", async () => {
    await expect(readForm(form("a=1", "application/json"), { errors, maxBytes: 100 })).rejects.toMatchObject({ code: "unsupported_media_type" });
    await expect(readForm(form("email=%00"), { errors, maxBytes: 100 })).rejects.toMatchObject({ code: "unstorable_text", details: { part: "body", field: "email" } });
    await expect(readForm(form(`a=${"x".repeat(200)}`), { errors, maxBytes: 100 })).rejects.toMatchObject({ code: "body_too_large" });
  });
});

describe("readQuery and readParams", () => {
  it("read values", () => {
    expect(readQuery(new Request("http://local/x?a=1&b=S%C3%A3o"), errors)).toEqual({ a: "1", b: "São" });
    expect(readParams({ categoria: "qualidade" }, errors)).toEqual({ categoria: "qualidade" });
  });

  it("refuse a name given twice, whatever its values, naming it", () => {
    for (const query of ["?a=1&b=2&a=2", "?a=1&a=1", "?a&a=", "?__proto__=1&__proto__=2"]) {
      expect(() => readQuery(new URL(`http://local/x${query}`), errors)).toThrow(
        expect.objectContaining({ code: "invalid_input", details: expect.objectContaining({ part: "query", issues: [expect.objectContaining({ path: [new URLSearchParams(query).keys().next().value] })] }) }),
      );
    }
  });

  it("refuse a NUL in a value or a name", () => {
    expect(() => readQuery(new URL("http://local/x?cidade=%00"), errors)).toThrow(expect.objectContaining({ code: "unstorable_text", details: { kind: "unstorable_text", part: "query", field: "cidade" } }));
    expect(() => readQuery(new URL("http://local/x?%00=1"), errors)).toThrow(expect.objectContaining({ details: expect.objectContaining({ field: "(name)" }) }));
    expect(() => readParams({ categoria: "\u0000" }, errors)).toThrow(expect.objectContaining({ details: expect.objectContaining({ part: "path", field: "categoria" }) }));
  });
});

describe("validate", () => {
  it("returns the parsed value or the service's invalid_input error with every issue", () => {
    const schema = z.object({ limit: z.coerce.number().int().min(1), periodo: z.enum(["mensal"]) });
    expect(validate(schema, { limit: "5", periodo: "mensal" }, "query", errors)).toEqual({ limit: 5, periodo: "mensal" });
    try {
      validate(schema, { limit: "0", periodo: "x" }, "query", errors);
      expect.unreachable();
    } catch (error) {
      expect(error).toMatchObject({ code: "invalid_input", details: { part: "query" } });
      expect((error as HttpError & { details: { issues: unknown[] } }).details.issues).toHaveLength(2);
    }
  });
});
