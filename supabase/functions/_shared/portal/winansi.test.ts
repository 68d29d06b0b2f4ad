import { describe, expect, it } from "vitest";
import { toWinAnsi } from "./winansi.ts";

describe("toWinAnsi", () => {
  it("keeps Portuguese text, R$ and typographic dashes and quotes", () => {
    expect(toWinAnsi("Padaria Pão Dourado – “ação” R$ 10,00 €")).toBe("Padaria Pão Dourado – “ação” R$ 10,00 €");
  });
  it("composes decomposed accents", () => {
    expect(toWinAnsi("Sa\u0303o Paulo")).toBe("São Paulo");
  });
  it("replaces what the standard fonts cannot draw", () => {
    expect(toWinAnsi("Setup → pronto 🚀 Привет")).toBe("Setup -> pronto ? ??????");
  });
  it("flattens line breaks and tabs, which break pdf-lib's width measuring", () => {
    expect(toWinAnsi("linha 1\nlinha 2\tfim")).toBe("linha 1 linha 2 fim");
  });
});
