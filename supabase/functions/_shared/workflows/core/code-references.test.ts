import { describe, expect, it } from "vitest";
import { compileCode } from "./code-references.ts";
import { compileValue } from "./resolver.ts";
import { inlineSandbox } from "../sandbox/sandbox.ts";
import type { ResolvedCode } from "./resolver.ts";

/** The source and, per slot, the reference and whether it is text. */
function rewrite(code: string) {
  const { source, slots } = compileCode(code);
  return { source, slots: slots.map((slot) => `${slot.token.raw}${slot.asText ? " as text" : ""}`) };
}

/** Compiles `code` as a Function's code, resolves it with `values` by reference, and runs it. */
async function evaluate(code: string, values: Record<string, unknown>): Promise<unknown> {
  const resolved = compileValue({ code }, new Set(["code"])).resolve({
    ref: (token) => values[token.raw],
    env: (token) => values[token.raw] as string,
  }) as { code: ResolvedCode };
  const { value } = await inlineSandbox.run({ kind: "function", source: resolved.code.source, values: resolved.code.values, deadline: Date.now() + 5_000, memoryBytes: 32 * 1024 * 1024 });
  return value;
}

describe("references in code", () => {
  it("are values in code", () => {
    expect(rewrite("return <a.b> + {{K}} + <a.b>;")).toEqual({ source: "return __refs[0] + __refs[1] + __refs[2];", slots: ["<a.b>", "{{K}}", "<a.b>"] });
  });

  it("are text inside single- and double-quoted strings, which become concatenations", () => {
    expect(rewrite("return 'Bearer {{TOKEN}}';")).toEqual({ source: "return ('Bearer ' + __refs[0] + '');", slots: ["{{TOKEN}} as text"] });
    expect(rewrite('return "<a.b>:<a.c>";')).toEqual({ source: 'return ("" + __refs[0] + ":" + __refs[1] + "");', slots: ["<a.b> as text", "<a.c> as text"] });
  });

  it("are text inside template literals, and values inside their ${…}", () => {
    expect(rewrite("return `Hi <a.name>, ${<a.count> + 1} {{K}}`;")).toEqual({ source: "return `Hi ${__refs[0]}, ${__refs[1] + 1} ${__refs[2]}`;", slots: ["<a.name> as text", "<a.count>", "{{K}} as text"] });
    expect(rewrite("return `a${`b<x.y>`}c`;")).toEqual({ source: "return `a${`b${__refs[0]}`}c`;", slots: ["<x.y> as text"] });
  });

  it("turn a quoted object key into a computed one", () => {
    expect(rewrite("return { 'k{{K}}': 1, \"v\": '{{K}}' };").source).toBe("return { ['k' + __refs[0] + '']: 1, \"v\": ('' + __refs[1] + '') };");
  });

  it("are left alone in comments and regular expression literals", () => {
    expect(rewrite("// uses <old.value>\n/* and {{OLD}} */ return /<a.b>/.test('x');")).toEqual({ source: "// uses <old.value>\n/* and {{OLD}} */ return /<a.b>/.test('x');", slots: [] });
  });

  it("tell a division after a value from a regular expression", () => {
    expect(rewrite("return <a.n> / 2 + '/{{K}}/';")).toEqual({ source: "return __refs[0] / 2 + ('/' + __refs[1] + '/');", slots: ["<a.n>", "{{K}} as text"] });
    expect(rewrite("return (1) / 2 + '{{K}}';").slots).toEqual(["{{K}} as text"]);
    expect(rewrite("return<a.n>/2+'{{K}}'").source).toBe("return __refs[0]/2+('' + __refs[1] + '')");
  });

  it("keep escapes, and drop a backslash that only escaped the reference's first character", () => {
    expect(rewrite("return 'it\\'s {{K}}';").source).toBe("return ('it\\'s ' + __refs[0] + '');");
    expect(rewrite("return '\\{{K}}';").source).toBe("return ('' + __refs[0] + '');");
  });

  it("give the value, as text, for every kind of quote", async () => {
    const values = { "{{SECRET}}": "s3cr3t", "<a.n>": 41, "<a.obj>": { x: [1] } };
    expect(await evaluate("return '{{SECRET}}';", values)).toBe("s3cr3t");
    expect(await evaluate('return "n=<a.n>";', values)).toBe("n=41");
    expect(await evaluate("return `obj=<a.obj> n+1=${<a.n> + 1}`;", values)).toBe('obj={"x":[1]} n+1=42');
    expect(await evaluate("return { 'k{{SECRET}}': '{{SECRET}}'.length };", values)).toEqual({ ks3cr3t: 6 });
    expect(await evaluate("return <a.n> + 1;", values)).toBe(42);
  });

  it("never let a value inject code, quoted or not", async () => {
    const attack = "'); throw new Error('injected'); ('` ${1}";
    const values = { "{{X}}": attack };
    expect(await evaluate("return '{{X}}';", values)).toBe(attack);
    expect(await evaluate('return "{{X}}";', values)).toBe(attack);
    expect(await evaluate("return `{{X}}`;", values)).toBe(attack);
    expect(await evaluate("return {{X}};", values)).toBe(attack);
  });
});
