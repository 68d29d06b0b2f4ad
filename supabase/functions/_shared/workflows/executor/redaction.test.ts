import { describe, expect, it } from "vitest";
import { inputTexts, MASK, secretRedactor } from "./redaction.ts";

const TOKEN = "sk_live_Ab3/9+xYz";

describe("secret redaction", () => {
  it("masks a long secret wherever it appears, in strings and keys, without touching the original", () => {
    const redactor = secretRedactor([TOKEN]);
    const value = { header: `Bearer ${TOKEN}`, list: [TOKEN, 1, true, null], [TOKEN]: "key", nested: { deep: `a${TOKEN}b${TOKEN}` } };
    expect(redactor.redact(value)).toEqual({ header: `Bearer ${MASK}`, list: [MASK, 1, true, null], [MASK]: "key", nested: { deep: `a${MASK}b${MASK}` } });
    expect(value.header).toBe(`Bearer ${TOKEN}`);
  });

  it("masks JSON-escaped, URL-encoded and base64 copies of a long secret", () => {
    const secret = 'pa ss"word\\with/odd+chars';
    const redactor = secretRedactor([secret]);
    expect(redactor.redactText(JSON.stringify({ secret }))).toBe(`{"secret":"${MASK}"}`);
    expect(redactor.redactText(`https://x.test/?q=${encodeURIComponent(secret)}&n=1`)).toBe(`https://x.test/?q=${MASK}&n=1`);
    expect(redactor.redactText(`q=${new URLSearchParams({ q: secret }).toString().slice(2)}`)).toBe(`q=${MASK}`);
  });

  it("masks a long secret base64-encoded inside longer text, at any offset, standard or URL-safe", () => {
    const redactor = secretRedactor([TOKEN]);
    for (const prefix of ["", "u:", "us:", "user:"]) {
      for (const suffix of ["", "!", "!!"]) {
        const encoded = btoa(`${prefix}${TOKEN}${suffix}`);
        const urlSafe = encoded.replaceAll("+", "-").replaceAll("/", "_");
        expect(redactor.redactText(`Basic ${encoded}`), `${prefix}|${suffix}`).toContain(MASK);
        expect(redactor.redactText(urlSafe), `${prefix}|${suffix} url-safe`).toContain(MASK);
      }
    }
    expect(redactor.redactText(btoa("nothing secret here at all"))).not.toContain(MASK);
  });

  it("masks secrets of 4 to 7 characters only where they stand alone, and numbers spelling them", () => {
    const redactor = secretRedactor(["prod", "4321"]);
    expect(redactor.redact(["env prod", "production", "prod-eu", "pin 4321.", "143210", 4321, 43210])).toEqual([`env ${MASK}`, "production", `${MASK}-eu`, `pin ${MASK}.`, "143210", MASK, 43210]);
  });

  it("masks secrets of 1 to 3 characters only as whole strings, so outputs keep their numbers and words", () => {
    const redactor = secretRedactor(["1", "yes"]);
    expect(redactor.redact({ a: "1", b: 1, c: "10", d: "yes", e: "yes sir", f: ["1"] })).toEqual({ a: MASK, b: 1, c: "10", d: MASK, e: "yes sir", f: [MASK] });
  });

  it("masks the longer of two secrets that overlap whole", () => {
    expect(secretRedactor(["abcdefgh", "abcdefgh-ijkl"]).redactText("x abcdefgh-ijkl y abcdefgh")).toBe(`x ${MASK} y ${MASK}`);
  });

  it("does nothing, and copies nothing, without secrets", () => {
    const value = { a: ["x"] };
    const redactor = secretRedactor(["", ""]);
    expect(redactor.idle).toBe(true);
    expect(redactor.redact(value)).toBe(value);
  });

  it("keeps an own __proto__ key as data", () => {
    const parsed = JSON.parse(`{"__proto__": {"token": "${TOKEN}"}}`) as Record<string, unknown>;
    const copy = secretRedactor([TOKEN]).redact(parsed);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(JSON.stringify(copy)).toBe('{"__proto__":{"token":"***"}}');
  });

  it("copies shared objects once and keeps what is not plain data as it is", () => {
    const shared = { token: TOKEN };
    const copy = secretRedactor([TOKEN]).redact({ a: shared, b: shared, when: new Date(0) });
    expect(copy.a).toBe(copy.b);
    expect(copy.a).toEqual({ token: MASK });
    expect(copy.when).toBeInstanceOf(Date);
  });

  it("leaves an echo of the run's input as typed, so masking tells no guesser they were right", () => {
    const right = secretRedactor([TOKEN], { echoes: [TOKEN] });
    const wrong = secretRedactor([TOKEN], { echoes: ["sk_live_guess"] });
    expect(right.redactText(`You said: ${TOKEN}`)).toBe(`You said: ${TOKEN}`);
    expect(wrong.redactText("You said: sk_live_guess")).toBe("You said: sk_live_guess");
    expect(right.redact({ echo: TOKEN })).toEqual({ echo: TOKEN });
    // A guess inside a longer message is its echo too.
    const inside = secretRedactor([TOKEN], { echoes: [`is it ${TOKEN}?`] });
    expect(inside.redactText(`You said: is it ${TOKEN}?`)).toBe(`You said: is it ${TOKEN}?`);
  });

  it("still masks a secret the echo only overlaps or does not contain", () => {
    const redactor = secretRedactor([TOKEN, "prod"], { echoes: ["sk_live", "Ab3/9+xYz and more", "a"] });
    expect(redactor.redactText(`key ${TOKEN}`)).toBe(`key ${MASK}`);
    expect(redactor.redactText(`sk_live then ${TOKEN} and more`)).toBe(`sk_live then ${MASK} and more`);
    expect(redactor.redactText("env prod, said a")).toBe(`env ${MASK}, said a`);
    const both = secretRedactor([TOKEN], { echoes: ["hello"] });
    expect(both.redactText(`hello ${TOKEN} hello`)).toBe(`hello ${MASK} hello`);
  });

  it("collects an input's texts without recursion, bounded", () => {
    expect(inputTexts({ message: "hi", history: [{ role: "user", content: "before" }], n: 1 }).sort()).toEqual(["before", "hi", "user"]);
    let deep: unknown = "bottom";
    for (let level = 0; level < 100_000; level++) deep = [deep];
    expect(inputTexts(deep)).toEqual(["bottom"]);
    expect(inputTexts(Array.from({ length: 5000 }, (_, index) => String(index)), 10)).toHaveLength(10);
  });
});
