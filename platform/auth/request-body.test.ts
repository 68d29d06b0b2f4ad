import { describe, expect, it } from "vitest";
import { readBody } from "./request-body.ts";
import { adminDeleteBody, passwordGrantBody, signupBody } from "./schemas.ts";

const post = (body: string) => new Request("http://auth/token", { method: "POST", body });

describe("readBody", () => {
  it("decodes like Go: unknown keys ignored, null as absent", async () => {
    expect(await readBody(post('{"email":"a@b.c","password":null,"extra":1}'), passwordGrantBody)).toEqual({ email: "a@b.c", password: null });
    expect(await readBody(post("null"), passwordGrantBody)).toEqual({});
  });

  it("answers 400 bad_json for malformed JSON, wrong types, arrays and empty bodies", async () => {
    for (const body of ["{oops", '{"email":42}', "[]", "", '"text"']) {
      await expect(readBody(post(body), passwordGrantBody)).rejects.toMatchObject({ status: 400, code: "bad_json" });
    }
  });

  it("answers 400 validation_failed for a NUL character in any string, which Postgres cannot store", async () => {
    for (const body of ['{"email":"a\\u0000@b.c"}', '{"data":{"full_name":"Ana\\u0000"}}', '{"data":{"tags":["x","\\u0000"]}}', '{"data":{"k\\u0000":1}}']) {
      await expect(readBody(post(body), signupBody)).rejects.toMatchObject({ status: 400, code: "validation_failed" });
    }
    // An escaped backslash followed by "u0000" is ordinary text.
    expect(await readBody(post('{"email":"a\\\\u0000"}'), passwordGrantBody)).toEqual({ email: "a\\u0000" });
  });

  it("accepts an empty body where GoTrue skips decoding it", async () => {
    expect(await readBody(post(""), adminDeleteBody, true)).toEqual({});
  });
});
