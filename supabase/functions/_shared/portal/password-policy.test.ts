import { describe, expect, it } from "vitest";
import { passwordProblems } from "./password-policy.ts";

const codes = (password: string) => passwordProblems(password).map((problem) => problem.code);

describe("passwordProblems", () => {
  it("accepts a password meeting every rule", () => {
    expect(passwordProblems("Orbita#2026")).toEqual([]);
    expect(passwordProblems("Ação-Segura-9")).toEqual([]);
  });
  it("names each rule a password breaks", () => {
    expect(codes("short1A")).toEqual(["too_short"]);
    expect(codes("alllowercase1")).toEqual(["missing_uppercase"]);
    expect(codes("ALLUPPERCASE1")).toEqual(["missing_lowercase"]);
    expect(codes("NoDigitsHere")).toEqual(["missing_digit"]);
    expect(codes(" Orbita#2026")).toEqual(["surrounding_whitespace"]);
    expect(codes("")).toEqual(["too_short", "missing_lowercase", "missing_uppercase", "missing_digit"]);
  });
  it("refuses control characters anywhere, including the NUL that was once accepted", () => {
    expect(codes("\u0000Abcdefgh12")).toEqual(["control_characters"]);
    expect(codes("Abcde\tfgh12")).toEqual(["control_characters"]);
    expect(codes("Abcdefgh12\u007f")).toEqual(["control_characters"]);
    expect(codes("Abcde\u009ffgh12")).toEqual(["control_characters"]);
    expect(codes("Abcdefgh12\n")).toEqual(["surrounding_whitespace", "control_characters"]);
    expect(codes("Abcde fgh12")).toEqual([]);
  });
  it("counts bytes for bcrypt's 72-byte limit, not characters", () => {
    expect(codes(`Aa1${"x".repeat(69)}`)).toEqual([]);
    expect(codes(`Aa1${"x".repeat(70)}`)).toEqual(["too_long"]);
    expect(codes(`Aa1${"ã".repeat(35)}`)).toEqual(["too_long"]);
  });
});
