import { describe, expect, it } from "vitest";
import { HttpError } from "../http/errors.ts";
import { formatCep, isValidCep, lookupPostalCode, normalizeCep, parseViaCepBody } from "./postal-code.ts";

const se = {
  cep: "01001-000",
  logradouro: "Praça da Sé",
  complemento: "lado ímpar",
  unidade: "",
  bairro: "Sé",
  localidade: "São Paulo",
  uf: "SP",
  estado: "São Paulo",
  regiao: "Sudeste",
  ibge: "3550308",
};

function answering(status: number, body: string): typeof fetch {
  return async () => new Response(body, { status, headers: { "content-type": "application/json" } });
}

async function failure(promise: Promise<unknown>): Promise<HttpError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof HttpError) return error;
    throw error;
  }
  throw new Error("expected a HttpError");
}

describe("CEP format", () => {
  it("normalises, validates and formats", () => {
    expect(normalizeCep("01001-000")).toBe("01001000");
    expect(normalizeCep(" 01.001-000 ")).toBe("01001000");
    expect(isValidCep("01001000")).toBe(true);
    expect(isValidCep("0100100")).toBe(false);
    expect(isValidCep("0100100a")).toBe(false);
    expect(isValidCep("00000000")).toBe(false);
    expect(formatCep("01001000")).toBe("01001-000");
  });
});

describe("parseViaCepBody", () => {
  it("maps ViaCEP's fields to the portal's", () => {
    expect(parseViaCepBody("01001000", se)).toEqual({
      found: true,
      address: { postalCode: "01001000", formatted: "01001-000", street: "Praça da Sé", complement: "lado ímpar", district: "Sé", city: "São Paulo", state: "SP", ibgeCode: "3550308" },
    });
  });
  it("treats erro: true and erro: \"true\" alike as an unknown CEP", () => {
    expect(parseViaCepBody("99999999", { erro: true })).toEqual({ found: false });
    expect(parseViaCepBody("99999999", { erro: "true" })).toEqual({ found: false });
  });
  it("refuses a body of the wrong shape", () => {
    expect(() => parseViaCepBody("01001000", ["nope"])).toThrow(HttpError);
  });
});

describe("lookupPostalCode", () => {
  it("asks <base>/ws/<cep>/json/ and returns the address", async () => {
    let asked = "";
    const fetchImpl: typeof fetch = async (input) => {
      asked = String(input);
      return new Response(JSON.stringify(se), { status: 200 });
    };
    const result = await lookupPostalCode("01001000", { baseUrl: "https://viacep.example/", fetchImpl });
    expect(asked).toBe("https://viacep.example/ws/01001000/json/");
    expect(result.found).toBe(true);
  });
  it("reports an unknown CEP as not found", async () => {
    expect(await lookupPostalCode("99999999", { baseUrl: "x:", fetchImpl: answering(200, '{"erro": "true"}') })).toEqual({ found: false });
  });
  it("tells an unreachable service, a failing one, a slow one and a refused format apart", async () => {
    const unreachable: typeof fetch = async () => {
      throw new TypeError("connection refused");
    };
    expect(await failure(lookupPostalCode("01001000", { baseUrl: "x:", fetchImpl: unreachable }))).toMatchObject({ status: 502, code: "postal_lookup_unavailable" });
    expect(await failure(lookupPostalCode("01001000", { baseUrl: "x:", fetchImpl: answering(503, "down") }))).toMatchObject({ status: 502, code: "postal_lookup_unavailable" });
    expect(await failure(lookupPostalCode("01001000", { baseUrl: "x:", fetchImpl: answering(200, "<html>") }))).toMatchObject({ status: 502, code: "postal_lookup_unavailable" });
    expect(await failure(lookupPostalCode("01001000", { baseUrl: "x:", fetchImpl: answering(400, "{}") }))).toMatchObject({ status: 400, code: "invalid_postal_code" });
    const slow: typeof fetch = (_input, init) =>
      new Promise((_resolve, reject) => init?.signal?.addEventListener("abort", () => reject(init.signal?.reason)));
    expect(await failure(lookupPostalCode("01001000", { baseUrl: "x:", fetchImpl: slow, timeoutMs: 20 }))).toMatchObject({ status: 504, code: "postal_lookup_timeout" });
  });
});
