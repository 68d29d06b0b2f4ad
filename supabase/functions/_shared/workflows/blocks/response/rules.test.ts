import { describe, expect, it } from "vitest";
import { configRuleProblems } from "../../state/config-rules.ts";
import { checkedHeaders } from "./headers.ts";
import { responseRules } from "./rules.ts";

const problems = (headers: Record<string, string>) => configRuleProblems(responseRules, { headers }, "c").map(({ field, message }) => `${field}: ${message}`);

describe("the Response's rules", () => {
  it("accept every RFC 9110 token as a header name", () => {
    expect(problems({ "X-Order": "1", "content-type": "a", "!#$%&'*+-.^_`|~09az": "b" })).toEqual([]);
    expect(configRuleProblems(responseRules, {}, "c")).toEqual([]);
  });

  it("refuse a name with a line break, a space or a colon, naming it as JSON, in the order of their UTF-8 bytes", () => {
    expect(problems({ "X-A\nInjected": "1", "X B": "2", "X:C": "3", Fine: "4" })).toEqual([
      'c.headers: header name "X B" is not a valid HTTP field name (RFC 9110: letters, digits and !#$%&\'*+-.^_`|~ only; no spaces or line breaks)',
      'c.headers: header name "X-A\\nInjected" is not a valid HTTP field name (RFC 9110: letters, digits and !#$%&\'*+-.^_`|~ only; no spaces or line breaks)',
      'c.headers: header name "X:C" is not a valid HTTP field name (RFC 9110: letters, digits and !#$%&\'*+-.^_`|~ only; no spaces or line breaks)',
    ]);
  });

  it("refuse at save time exactly the names the run would refuse", () => {
    for (const name of ["X-Ok", "X\r\nSet-Cookie", "é", "", "a b", "a\u0000"]) {
      let runFails = false;
      try {
        checkedHeaders({ [name]: "v" });
      } catch {
        runFails = true;
      }
      expect(problems({ [name]: "v" }).length > 0, JSON.stringify(name)).toBe(runFails);
    }
  });
});
