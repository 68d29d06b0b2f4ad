import { createClient } from "@supabase/supabase-js";
import { SignJWT } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { serviceClient, type TestUser } from "../helpers/clients.ts";
import { env } from "../helpers/env.ts";
import { countRows, createCustomer, createPortalUser, createProduct, createProposal, type CustomerRow, maskCnpj, type ProductRow, type ProposalRow, readProposal, validCnpj } from "./factories.ts";

/**
 * Bad input through the data API: each is refused with a clear error, the platform's real code and
 * status (decisions, "Errors"), and leaves nothing behind.
 */
let ana: TestUser;
let bruno: TestUser;
let product: ProductRow;
let retired: ProductRow;
let anaCustomer: CustomerRow;
let brunoCustomer: CustomerRow;
let anaProposal: ProposalRow;

function newCustomer(overrides: Record<string, unknown> = {}) {
  return { company_name: "Empresa Erro Ltda", contact_name: "Erro", email: `erro-${validCnpj()}@cliente.test`, phone: "(11) 98765-4321", cnpj: validCnpj(), ...overrides };
}

beforeAll(async () => {
  [ana, bruno] = await Promise.all([createPortalUser("Ana Erros", "technician"), createPortalUser("Bruno Erros", "technician")]);
  [product, retired] = await Promise.all([createProduct(), createProduct({ is_active: false })]);
  [anaCustomer, brunoCustomer] = await Promise.all([createCustomer(ana), createCustomer(bruno)]);
  anaProposal = await createProposal(ana, anaCustomer.id, product.id);
});

async function customerCount(user: TestUser): Promise<number> {
  return await countRows(serviceClient(), "customers", "technician_id", user.id);
}

describe("invalid customer data", () => {
  it.each([
    ["an invalid CNPJ (check digits)", { cnpj: "11.222.333/0001-80" }, 'Invalid CNPJ "11222333000180"'],
    ["a CNPJ of the wrong length", { cnpj: "1122233300018" }, 'Invalid CNPJ "1122233300018"'],
    ["an invalid e-mail", { email: "sem-arroba" }, 'Invalid e-mail "sem-arroba"'],
    ["an invalid phone", { phone: "1234" }, 'Invalid phone "1234"'],
  ])("refuses %s with 23514 / 400 and stores nothing", async (_what, overrides, message) => {
    const before = await customerCount(ana);
    const { data, error, status } = await ana.client.from("customers").insert(newCustomer(overrides)).select("id");
    expect(data).toBeNull();
    expect(status).toBe(400);
    expect(error?.code).toBe("23514");
    expect(error?.message).toBe(message);
    expect(await customerCount(ana)).toBe(before);
  });

  it("refuses a malformed CEP with 23514 / 400, naming it normalised", async () => {
    const before = await customerCount(ana);
    const { error, status } = await ana.client.from("customers").insert(newCustomer({ postal_code: "0100-100" }));
    expect(status).toBe(400);
    expect(error?.code).toBe("23514");
    expect(error?.message).toBe('Invalid CEP "0100100"');
    expect(await customerCount(ana)).toBe(before);
  });

  it("refuses a duplicate customer (same CNPJ, any mask) with 23505 / 409", async () => {
    const before = await customerCount(ana);
    const { error, status } = await ana.client.from("customers").insert(newCustomer({ cnpj: maskCnpj(anaCustomer.cnpj) }));
    expect(status).toBe(409);
    expect(error?.code).toBe("23505");
    expect(error?.message).toContain("customers_cnpj_key");
    expect(await customerCount(ana)).toBe(before);
  });

  it("refuses the same contact e-mail twice for one technician with 23505 / 409", async () => {
    const { error, status } = await ana.client.from("customers").insert(newCustomer({ email: anaCustomer.email.toUpperCase() }));
    expect(status).toBe(409);
    expect(error?.code).toBe("23505");
  });
});

describe("invalid proposals", () => {
  async function proposalCount(): Promise<number> {
    return await countRows(serviceClient(), "proposals", "technician_id", ana.id);
  }

  it.each([
    ["a negative monthly value", { monthly_value: -10 }, "23514", 400],
    ["zero contract months", { contract_months: 0 }, "23514", 400],
    ["a total that is not monthly × months", { total_value: 1 }, "23514", 400],
  ])("refuses %s", async (_what, overrides, code, status) => {
    const before = await proposalCount();
    const result = await ana.client.from("proposals").insert({ customer_id: anaCustomer.id, product_id: product.id, monthly_value: 100, contract_months: 12, ...overrides });
    expect(result.error?.code).toBe(code);
    expect(result.status).toBe(status);
    expect(await proposalCount()).toBe(before);
  });

  it("refuses an unknown product with 23503 / 409", async () => {
    const before = await proposalCount();
    const unknown = "5e3d9999-0000-4000-8000-000000000000";
    const { error, status } = await ana.client.from("proposals").insert({ customer_id: anaCustomer.id, product_id: unknown, monthly_value: 100, contract_months: 12 });
    expect(status).toBe(409);
    expect(error?.code).toBe("23503");
    expect(error?.message).toBe(`Unknown product ${unknown}`);
    expect(await proposalCount()).toBe(before);
  });

  it("refuses an inactive product with 23514 / 400", async () => {
    const { error, status } = await ana.client.from("proposals").insert({ customer_id: anaCustomer.id, product_id: retired.id, monthly_value: 100, contract_months: 12 });
    expect(status).toBe(400);
    expect(error?.code).toBe("23514");
    expect(error?.message).toBe(`Product ${retired.id} is inactive and cannot be proposed`);
  });

  it("refuses an illegal status move with P0001 / 400", async () => {
    const { error, status } = await ana.client.from("proposals").update({ status: "active" }).eq("id", anaProposal.id);
    expect(status).toBe(400);
    expect(error?.code).toBe("P0001");
    expect(error?.message).toBe(`Illegal status change for proposal ${anaProposal.code}: pending → active`);
    expect(error?.hint).toContain("approved → active (admin)");
    expect((await readProposal(anaProposal.id)).status).toBe("pending");
  });

  it("refuses a technician approving their own proposal with 42501 / 403", async () => {
    const { error, status } = await ana.client.from("proposals").update({ status: "approved" }).eq("id", anaProposal.id);
    expect(status).toBe(403);
    expect(error?.code).toBe("42501");
    expect((await readProposal(anaProposal.id)).status).toBe("pending");
  });
});

describe("a technician writing another technician's rows", () => {
  it("cannot create a customer for them (42501 / 403)", async () => {
    const before = await customerCount(bruno);
    const { error, status } = await ana.client.from("customers").insert(newCustomer({ technician_id: bruno.id }));
    expect(status).toBe(403);
    expect(error?.code).toBe("42501");
    expect(error?.message).toBe('new row violates row-level security policy for table "customers"');
    expect(await customerCount(bruno)).toBe(before);
  });
  it("cannot propose to their customer (42501 / 403)", async () => {
    const { error, status } = await ana.client.from("proposals").insert({ customer_id: brunoCustomer.id, product_id: product.id, monthly_value: 100, contract_months: 12 });
    expect(status).toBe(403);
    expect(error?.code).toBe("42501");
    expect(error?.message).toBe(`Customer ${brunoCustomer.id} belongs to another technician`);
  });
  it("cannot take their customer over (42501 / 403)", async () => {
    const { error, status } = await ana.client.from("customers").update({ technician_id: ana.id }).eq("id", anaCustomer.id).select();
    expect(error).toBeNull();
    expect(status).toBe(200);
    const handOver = await ana.client.from("customers").update({ technician_id: bruno.id }).eq("id", anaCustomer.id);
    expect(handOver.status).toBe(403);
    expect(handOver.error?.code).toBe("42501");
  });
  it("updates and deletes of their rows match nothing and change nothing", async () => {
    const update = await ana.client.from("customers").update({ company_name: "Tomado" }).eq("id", brunoCustomer.id).select();
    expect(update.error).toBeNull();
    expect(update.data).toEqual([]);
    const removal = await ana.client.from("customers").delete().eq("id", brunoCustomer.id).select();
    expect(removal.data).toEqual([]);
    const { data } = await serviceClient().from("customers").select("company_name").eq("id", brunoCustomer.id).single();
    expect(data?.company_name).toBe(brunoCustomer.company_name);
  });
});

describe("missing or bad JWTs", () => {
  const secret = () => new TextEncoder().encode(env.jwtSecret);

  // Node 20 has no global WebSocket; supabase-js wants one for realtime even when unused.
  const realtime = { transport: WebSocket as unknown as typeof globalThis.WebSocket };

  function clientWithToken(token: string) {
    return createClient(env.url, env.anonKey, {
      auth: { persistSession: false, autoRefreshToken: false },
      global: { headers: { Authorization: `Bearer ${token}` } },
      realtime,
    });
  }

  it("a token with a bad signature is PGRST301 / 401", async () => {
    const forged = await new SignJWT({ role: "authenticated", sub: ana.id }).setProtectedHeader({ alg: "HS256" }).setExpirationTime("1h").sign(new TextEncoder().encode("not-the-project-secret-not-the-project-secret"));
    const { data, error, status } = await clientWithToken(forged).from("customers").select("id");
    expect(data).toBeNull();
    expect(status).toBe(401);
    expect(error?.code).toBe("PGRST301");
  });
  it("an expired token is PGRST301 / 401 (PostgREST 12)", async () => {
    const expired = await new SignJWT({ role: "authenticated", sub: ana.id }).setProtectedHeader({ alg: "HS256" }).setIssuedAt(Math.floor(Date.now() / 1000) - 7200).setExpirationTime(Math.floor(Date.now() / 1000) - 3600).sign(secret());
    const { error, status } = await clientWithToken(expired).from("customers").insert(newCustomer());
    expect(status).toBe(401);
    expect(error?.code).toBe("PGRST301");
    expect(error?.message).toContain("JWT expired");
  });
  it("a garbage token is PGRST301 / 401", async () => {
    const { error, status } = await clientWithToken("not-a-jwt").from("proposals").select("id");
    expect(status).toBe(401);
    expect(error?.code).toBe("PGRST301");
  });
  it("no user token at all (anon key only) is 42501 / 401 on every portal table", async () => {
    const anon = createClient(env.url, env.anonKey, { auth: { persistSession: false }, realtime });
    for (const table of ["profiles", "products", "customers", "proposals", "orders", "commissions"]) {
      const { error, status } = await anon.from(table).select("*").limit(1);
      expect(status, table).toBe(401);
      expect(error?.code, table).toBe("42501");
    }
    const write = await anon.from("customers").insert(newCustomer());
    expect(write.status).toBe(401);
    expect(write.error?.code).toBe("42501");
  });
});
