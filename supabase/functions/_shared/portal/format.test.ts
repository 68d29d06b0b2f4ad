import { describe, expect, it } from "vitest";
import { formatBRL, formatCnpj, formatDate, formatMonths, formatPhone } from "./format.ts";

describe("formatBRL", () => {
  it("writes reais with thousands dots, decimal comma and a plain space", () => {
    expect(formatBRL(1798.8)).toBe("R$ 1.798,80");
    expect(formatBRL(35)).toBe("R$ 35,00");
    expect(formatBRL(0.1 + 0.2)).toBe("R$ 0,30");
  });
});

describe("formatCnpj", () => {
  it("masks numeric and alphanumeric CNPJs", () => {
    expect(formatCnpj("11222333000181")).toBe("11.222.333/0001-81");
    expect(formatCnpj("12ABC34501DE35")).toBe("12.ABC.345/01DE-35");
  });
  it("leaves anything else as it is", () => {
    expect(formatCnpj("123")).toBe("123");
  });
});

describe("formatPhone", () => {
  it("masks mobiles and landlines", () => {
    expect(formatPhone("11987654321")).toBe("(11) 98765-4321");
    expect(formatPhone("1133445566")).toBe("(11) 3344-5566");
  });
});

describe("formatDate and formatMonths", () => {
  it("uses the São Paulo calendar day", () => {
    expect(formatDate("2026-01-01T02:00:00Z")).toBe("31/12/2025");
    expect(formatDate(new Date("2026-03-15T12:00:00Z"))).toBe("15/03/2026");
  });
  it("agrees in number", () => {
    expect(formatMonths(1)).toBe("1 mês");
    expect(formatMonths(12)).toBe("12 meses");
  });
});
