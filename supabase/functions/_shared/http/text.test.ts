import { describe, expect, it } from "vitest";
import { findUnstorableText, isStorableText } from "./text.ts";

describe("isStorableText", () => {
  it("accepts any well-formed text, accents, emoji and U+FFFD included", () => {
    expect(isStorableText("São Paulo 🚀 \uFFFD")).toBe(true);
  });

  it("refuses a NUL anywhere and a lone surrogate", () => {
    expect(isStorableText("\u0000")).toBe(false);
    expect(isStorableText("abc\u0000def")).toBe(false);
    expect(isStorableText("\ud800")).toBe(false);
    expect(isStorableText("x\udc00")).toBe(false);
  });
});

describe("findUnstorableText", () => {
  it("names the first field holding unstorable text, at any depth", () => {
    expect(findUnstorableText({ acoes: [{ ok: "a" }, { metadata: { nota: "a\u0000" } }] })).toBe("acoes.1.metadata.nota");
  });

  it("checks object keys too", () => {
    expect(findUnstorableText({ metadata: { "a\u0000": 1 } })).toBe("metadata.(key)");
  });

  it("walks JSON nested far deeper than the call stack allows", () => {
    const deep = JSON.parse(`${"[".repeat(100_000)}"\\u0000"${"]".repeat(100_000)}`);
    expect(findUnstorableText(deep)).toMatch(/^0(\.0)+$/);
    expect(findUnstorableText(JSON.parse(`${"[".repeat(100_000)}${"]".repeat(100_000)}`))).toBeNull();
  });

  it("is null for storable values and for non-text ones", () => {
    expect(findUnstorableText({ a: [1, true, null, "ok"], b: 1e308 })).toBeNull();
    expect(findUnstorableText("\u0000")).toBe("(value)");
  });
});
