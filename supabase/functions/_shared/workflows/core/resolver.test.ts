import { describe, expect, it } from "vitest";
import { WorkflowError } from "./errors.ts";
import { compileValue, stringifyForText, type TokenSource } from "./resolver.ts";

const values: Record<string, unknown> = { "fn.n": 3, "fn.obj": { a: 1 }, "fn.none": null };
const source: TokenSource = {
  ref: (token) => {
    const key = `${token.head}.${token.path.join(".")}`;
    if (!(key in values)) throw new WorkflowError("REFERENCE_NOT_FOUND", `reference ${token.raw} failed`);
    return values[key];
  },
  env: (token) => `env:${token.name}`,
};

describe("compileValue", () => {
  it("returns static values as they are, without copying", () => {
    const config = { a: [1, "two", { b: "<not a ref>" }] };
    const compiled = compileValue(config);
    expect(compiled.isStatic).toBe(true);
    expect(compiled.resolve(source)).toBe(config);
  });

  it("keeps the type of a value that is exactly one reference", () => {
    expect(compileValue("<fn.n>").resolve(source)).toBe(3);
    expect(compileValue("<fn.obj>").resolve(source)).toEqual({ a: 1 });
    expect(compileValue("{{KEY}}").resolve(source)).toBe("env:KEY");
  });

  it("writes references into text: strings raw, the rest as JSON", () => {
    expect(compileValue("n=<fn.n> obj=<fn.obj> none=<fn.none> {{K}}").resolve(source)).toBe('n=3 obj={"a":1} none=null env:K');
  });

  it("resolves nested structures and leaves keys alone", () => {
    expect(compileValue({ "<fn.n>": ["<fn.n>", { x: "<fn.obj>" }] }).resolve(source)).toEqual({ "<fn.n>": [3, { x: { a: 1 } }] });
  });

  it("compiles code fields so values travel as data", () => {
    const compiled = compileValue({ code: "return <fn.n> + {{K}};", note: "<fn.n>" }, new Set(["code"]));
    expect(compiled.resolve(source)).toEqual({ code: { kind: "code", source: "return __refs[0] + __refs[1];", values: [3, "env:K"], refs: ["<fn.n>", "{{K}}"] }, note: 3 });
    const nested = compileValue({ conditions: [{ expression: "<fn.n> > 1" }] }, new Set(["conditions[].expression"]));
    expect(nested.resolve(source)).toEqual({ conditions: [{ expression: { kind: "code", source: "__refs[0] > 1", values: [3], refs: ["<fn.n>"] } }] });
  });

  it("traces code fields as the user wrote them, and leaves every other value as resolved", () => {
    const compiled = compileValue({ code: "return <fn.n> + {{K}};", note: "<fn.obj>", fixed: [1] }, new Set(["code"]));
    const resolved = compiled.resolve(source) as Record<string, unknown>;
    expect(compiled.hasCode).toBe(true);
    const traced = compiled.traced(resolved) as Record<string, unknown>;
    expect(traced).toEqual({ code: "return <fn.n> + {{K}};", note: { a: 1 }, fixed: [1] });
    expect(traced.note).toBe(resolved.note);
    const nested = compileValue({ conditions: [{ id: "a", expression: "<fn.n> > 1" }, { id: "b" }] }, new Set(["conditions[].expression"]));
    expect(nested.traced(nested.resolve(source))).toEqual({ conditions: [{ id: "a", expression: "<fn.n> > 1" }, { id: "b" }] });
    const plain = compileValue({ note: "<fn.n>" });
    expect(plain.hasCode).toBe(false);
  });

  it("lets resolution errors through", () => {
    expect(() => compileValue("<fn.missing>").resolve(source)).toThrow("reference <fn.missing> failed");
  });
});

describe("stringifyForText", () => {
  it("writes values the way templates do", () => {
    expect([stringifyForText("s"), stringifyForText(1), stringifyForText(true), stringifyForText(null), stringifyForText([1]), stringifyForText(undefined)]).toEqual(["s", "1", "true", "null", "[1]", ""]);
  });
});
