import { describe, expect, it } from "vitest";
import { formatPath, getPath, parseTemplate } from "./references.ts";

/** The references and variables in a string, without the text around them. */
const tokensIn = (text: string) => parseTemplate(text).filter((part) => part.kind !== "text");

describe("parseTemplate", () => {
  it("splits text, block references and environment variables", () => {
    expect(parseTemplate("Hi <API.name>, key {{ KEY }}!")).toEqual([
      { kind: "text", text: "Hi " },
      { kind: "ref", raw: "<API.name>", head: "api", path: ["name"] },
      { kind: "text", text: ", key " },
      { kind: "env", raw: "{{ KEY }}", name: "KEY" },
      { kind: "text", text: "!" },
    ]);
  });

  it("parses dotted paths and indexes", () => {
    expect(tokensIn("<fn.result.items[2].id>")[0]).toMatchObject({ head: "fn", path: ["result", "items", 2, "id"] });
    expect(tokensIn("<loop.item.0>")[0]).toMatchObject({ head: "loop", path: ["item", "0"] });
  });

  it("leaves HTML, comparisons and spaced names alone", () => {
    for (const text of ["<b>bold</b>", "a < b && c > d", "<Send Email.status>", "i<arr.length;i++", "{{ not valid-name }}"]) {
      expect(tokensIn(text)).toEqual([]);
    }
  });

  it("keeps a plain string as one text part", () => {
    expect(parseTemplate("")).toEqual([{ kind: "text", text: "" }]);
    expect(parseTemplate("plain")).toEqual([{ kind: "text", text: "plain" }]);
  });
});

describe("getPath", () => {
  const value = { items: [{ id: "a" }], name: "abc" };

  it("walks own properties, indexes and lengths", () => {
    expect(getPath(value, ["items", 0, "id"])).toEqual({ found: true, value: "a" });
    expect(getPath(value, ["items", "0", "id"])).toEqual({ found: true, value: "a" });
    expect(getPath(value, ["items", "length"])).toEqual({ found: true, value: 1 });
    expect(getPath(value, ["name", "length"])).toEqual({ found: true, value: 3 });
  });

  it("says where it stopped and what was there", () => {
    expect(getPath(value, ["items", 3])).toEqual({ found: false, depth: 1, available: ["[0]..[0]", "length"] });
    expect(getPath(value, ["nope"])).toEqual({ found: false, depth: 0, available: ["items", "name"] });
  });

  it("never reaches a prototype", () => {
    expect(getPath({}, ["constructor"]).found).toBe(false);
    expect(getPath({}, ["__proto__"]).found).toBe(false);
  });
});

describe("formatPath", () => {
  it("writes paths back in reference syntax", () => {
    expect(formatPath(["items", 0, "id"])).toBe("items[0].id");
  });
});
