import { createServer, type Server } from "node:http";
import { beforeAll, afterAll, describe, expect, it } from "vitest";
import { type TestUser } from "../helpers/clients.ts";
import { env } from "../helpers/env.ts";
import { callFunction, createPortalUser } from "./factories.ts";

/**
 * postal-code-lookup against a fake ViaCEP on the port test/fixtures/functions.env gives the test
 * stack's functions (POSTAL_LOOKUP_URL=http://127.0.0.1:58399): found, unknown (both spellings of
 * `erro`), a failing service, a malformed CEP that never reaches the service, and an unreachable
 * service once the fake is stopped.
 */
const PORT = 58399;
const requests: string[] = [];
let server: Server;
let user: TestUser;

const ADDRESSES: Record<string, unknown> = {
  "01001000": { cep: "01001-000", logradouro: "Praça da Sé", complemento: "lado ímpar", unidade: "", bairro: "Sé", localidade: "São Paulo", uf: "SP", estado: "São Paulo", regiao: "Sudeste", ibge: "3550308", gia: "1004", ddd: "11", siafi: "7107" },
  "99999999": { erro: true },
  "99999998": { erro: "true" },
};

beforeAll(async () => {
  user = await createPortalUser("Ana CEP", "technician");
  server = createServer((request, response) => {
    requests.push(request.url ?? "");
    const cep = /^\/ws\/(\d{8})\/json\/$/.exec(request.url ?? "")?.[1];
    if (cep === "50000000") {
      response.writeHead(500).end("internal error");
      return;
    }
    if (!cep) {
      response.writeHead(400, { "content-type": "text/html" }).end("<h1>Bad Request</h1>");
      return;
    }
    response.writeHead(200, { "content-type": "application/json; charset=utf-8" }).end(JSON.stringify(ADDRESSES[cep] ?? { erro: true }));
  });
  await new Promise<void>((resolve) => server.listen(PORT, "127.0.0.1", resolve));
});

afterAll(async () => {
  if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
});

async function lookup(cep: string, method: "GET" | "POST" = "GET"): Promise<{ status: number; body: Record<string, unknown> & { error?: { code: string } } }> {
  const response =
    method === "GET"
      ? await fetch(`${env.url}/functions/v1/postal-code-lookup?cep=${encodeURIComponent(cep)}`, { headers: { authorization: `Bearer ${user.accessToken}` } })
      : await callFunction("postal-code-lookup", { token: user.accessToken, body: { cep } });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe("postal-code-lookup", () => {
  it("returns the address of a known CEP, asking the service for /ws/<cep>/json/", async () => {
    const result = await lookup("01001-000");
    expect(result.status).toBe(200);
    expect(result.body).toEqual({ postalCode: "01001000", formatted: "01001-000", street: "Praça da Sé", complement: "lado ímpar", district: "Sé", city: "São Paulo", state: "SP", ibgeCode: "3550308" });
    expect(requests.at(-1)).toBe("/ws/01001000/json/");
  });
  it("accepts the CEP in a JSON body too", async () => {
    expect((await lookup("01001000", "POST")).status).toBe(200);
  });
  it("answers 404 for an unknown CEP, whether the service says erro: true or erro: \"true\"", async () => {
    for (const cep of ["99999999", "99999998"]) {
      const result = await lookup(cep);
      expect(result.status).toBe(404);
      expect(result.body.error?.code).toBe("postal_code_not_found");
    }
  });
  it("answers 400 for a malformed CEP without asking the service", async () => {
    const before = requests.length;
    for (const cep of ["0100100", "01001-0000", "abcdefgh", "00000000"]) {
      const result = await lookup(cep);
      expect(result.status, cep).toBe(400);
      expect(result.body.error?.code).toBe("invalid_postal_code");
    }
    expect(requests.length).toBe(before);
  });
  it("answers 502 when the service fails", async () => {
    const result = await lookup("50000000");
    expect(result.status).toBe(502);
    expect(result.body.error).toEqual({ code: "postal_lookup_unavailable", message: "The postal-code service answered HTTP 500" });
    expect(requests.at(-1)).toBe("/ws/50000000/json/");
  });
  it("requires a signed-in user", async () => {
    const response = await fetch(`${env.url}/functions/v1/postal-code-lookup?cep=01001000`, { headers: { authorization: `Bearer ${env.anonKey}` } });
    expect(response.status).toBe(401);
  });
  it("answers 502 when the service is unreachable", async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const result = await lookup("01001000");
    expect(result.status).toBe(502);
    expect(result.body.error).toEqual({ code: "postal_lookup_unavailable", message: "The postal-code service is unreachable" });
  });
});
