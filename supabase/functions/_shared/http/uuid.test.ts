import { describe, expect, it } from "vitest";
import { isUuid, uuidSchema } from "./uuid.ts";

describe("isUuid", () => {
  it.each([
    ["an RFC 9562 version-4 id", "5e3d0000-0000-4000-8000-000000000001"],
    ["the gamification seed's ids, neither version nor variant RFC", "402a8bf1-ec9a-c693-0f4a-5d1e7c2b9a10"],
    ["the nil UUID", "00000000-0000-0000-0000-000000000000"],
    ["the max UUID", "ffffffff-ffff-ffff-ffff-ffffffffffff"],
    ["upper case", "402A8BF1-EC9A-C693-0F4A-5D1E7C2B9A10"],
  ])("accepts %s", (_what, value) => {
    expect(isUuid(value)).toBe(true);
    expect(uuidSchema().safeParse(value).success).toBe(true);
  });

  it.each([
    ["braces, which Postgres reads but never prints", "{402a8bf1-ec9a-c693-0f4a-5d1e7c2b9a10}"],
    ["no hyphens", "402a8bf1ec9ac6930f4a5d1e7c2b9a10"],
    ["hyphens in other places", "402a-8bf1-ec9a-c693-0f4a-5d1e-7c2b-9a10"],
    ["a non-hex digit", "402a8bf1-ec9a-c693-0f4a-5d1e7c2b9a1g"],
    ["a trailing newline", "402a8bf1-ec9a-c693-0f4a-5d1e7c2b9a10\n"],
    ["a NUL", "402a8bf1-ec9a-c693-0f4a-5d1e7c2b9a1\u0000"],
    ["empty text", ""],
  ])("refuses %s", (_what, value) => {
    expect(isUuid(value)).toBe(false);
    expect(uuidSchema().safeParse(value).success).toBe(false);
  });

  it("refuses values that are not strings, with the service's wording", () => {
    expect(isUuid(42)).toBe(false);
    expect(uuidSchema("deve ser um UUID").safeParse(42).error?.issues[0].message).toBe("deve ser um UUID");
    expect(uuidSchema("deve ser um UUID").safeParse("x").error?.issues[0].message).toBe("deve ser um UUID");
  });
});
