import { describe, expect, it } from "vitest";
import { decodeCursor, encodeCursor, isCursorTime } from "./keyset-cursor.ts";

const id = "4b2a5b4e-9d1c-4f6e-8a7b-0c1d2e3f4a5b";

describe("the keyset cursor", () => {
  it("round-trips a position to the microsecond and its order", () => {
    const cursor = { at: "2026-11-23T10:15:00.123456Z", id, order: "asc" as const };
    const text = encodeCursor(cursor);
    expect(text).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(text)).toEqual(cursor);
    expect(decodeCursor(`${text}==`.slice(0, text.length + ((4 - (text.length % 4)) % 4)))).toEqual(cursor);
  });

  it("refuses what this API did not write", () => {
    const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
    for (const text of [
      "", "not a cursor", "%%%", "a", encode("text"), encode([]), encode(null),
      encode({ t: "2026-11-23T10:15:00.123456Z", i: id }),
      encode({ t: "2026-11-23T10:15:00.123456Z", i: id, o: "up" }),
      encode({ t: "2026-11-23T10:15:00.123Z", i: id, o: "desc" }),
      encode({ t: "2026-11-23T10:15:00.123456Z", i: "1", o: "desc" }),
      encode({ t: "2026-11-23T10:15:00.123456Z", i: id, o: "desc", more: true }),
      Buffer.from("{\"t\":").toString("base64url"),
      "x".repeat(401),
    ]) {
      expect(decodeCursor(text), text).toBeNull();
    }
  });

  it("takes only real instants", () => {
    expect(isCursorTime("2024-02-29T23:59:59.999999Z")).toBe(true);
    expect(isCursorTime("0001-01-01T00:00:00.000000Z")).toBe(true);
    for (const text of ["2026-02-29T00:00:00.000000Z", "2026-04-31T00:00:00.000000Z", "2026-01-01T24:00:00.000000Z", "0000-01-01T00:00:00.000000Z", "2026-01-01T00:00:60.000000Z", "2026-01-01 00:00:00.000000Z"]) {
      expect(isCursorTime(text), text).toBe(false);
    }
  });
});
