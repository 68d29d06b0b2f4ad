import { beforeAll, describe, expect, it } from "vitest";
import { anonClient, serviceClient, type TestUser } from "../helpers/clients.ts";
import { createCustomer, createPortalUser, createProduct, createProposal, type CustomerRow, maskCnpj, type ProductRow, type ProposalRow, setStatus, validCnpj } from "./factories.ts";

/**
 * Every table operation of the portal spec through supabase-js, as each role: read a profile,
 * list active products, insert a product, list and insert customers, list proposals with their
 * customer, product and profile, insert a proposal, list commissions with orders → proposals →
 * customers and products, and the has_role RPC.
 */
let ana: TestUser;
let bruno: TestUser;
let admin: TestUser;
let superAdmin: TestUser;
let product: ProductRow;
let retired: ProductRow;
let anaCustomers: CustomerRow[];
let anaProposal: ProposalRow;

beforeAll(async () => {
  [ana, bruno, admin, superAdmin] = await Promise.all([
    createPortalUser("Ana Técnica", "technician"),
    createPortalUser("Bruno Técnico", "technician"),
    createPortalUser("Carla Admin", "admin"),
    createPortalUser("Diego Super", "super_admin"),
  ]);
  [product, retired] = await Promise.all([createProduct({ name: `Aaa Ativo ${ana.id.slice(0, 6)}` }), createProduct({ is_active: false })]);
  anaCustomers = [
    await createCustomer(ana, { company_name: "Zeta Comércio Ltda" }),
    await createCustomer(ana, { company_name: "Alfa Serviços Ltda" }),
  ];
  await createCustomer(bruno, { company_name: "Bravo do Bruno Ltda" });
  anaProposal = await createProposal(ana, anaCustomers[0].id, product.id, { monthly_value: 149.9, contract_months: 12 });
});

describe("profiles: read by user_id (single)", () => {
  it("a technician reads their own profile", async () => {
    const { data, error } = await ana.client.from("profiles").select("user_id, full_name, email").eq("user_id", ana.id).single();
    expect(error).toBeNull();
    expect(data).toEqual({ user_id: ana.id, full_name: "Ana Técnica", email: ana.email });
  });
  it("a technician gets no row for someone else's profile", async () => {
    const { data, error, status } = await ana.client.from("profiles").select("*").eq("user_id", bruno.id).single();
    expect(data).toBeNull();
    expect(status).toBe(406);
    expect(error?.code).toBe("PGRST116");
  });
  it("admins and super admins read anyone's profile", async () => {
    for (const reader of [admin, superAdmin]) {
      const { data } = await reader.client.from("profiles").select("full_name").eq("user_id", bruno.id).single();
      expect(data).toEqual({ full_name: "Bruno Técnico" });
    }
  });
});

describe("products: list active ordered by name, insert", () => {
  it("a technician lists active products only, ordered by name", async () => {
    const { data, error } = await ana.client.from("products").select("id, name, is_active").eq("is_active", true).order("name");
    expect(error).toBeNull();
    const names = (data ?? []).map((row) => row.name as string);
    expect(names).toEqual([...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    expect(names).toContain(product.name);
    expect(names).not.toContain(retired.name);
  });
  it("even without the is_active filter a technician never sees inactive products of others", async () => {
    const { data } = await ana.client.from("products").select("id").eq("id", retired.id);
    expect(data).toEqual([]);
  });
  it("an admin and a super admin insert products", async () => {
    for (const [writer, name] of [[admin, `Microsoft 365 E3 ${admin.id.slice(0, 6)}`], [superAdmin, `Vivo Fibra ${superAdmin.id.slice(0, 6)}`]] as const) {
      const { data, error, status } = await writer.client
        .from("products")
        .insert({ name, description: "Plano", price: 0, monthly_price: 199.9, product_type: "microsoft_365", commission_percentage: 0.12 })
        .select("name, monthly_price, is_active")
        .single();
      expect(error).toBeNull();
      expect(status).toBe(201);
      expect(data).toEqual({ name, monthly_price: 199.9, is_active: true });
    }
  });
  it("a technician cannot insert a product (42501, 403)", async () => {
    const { error, status } = await ana.client.from("products").insert({ name: "Não", monthly_price: 1, product_type: "test", commission_percentage: 0.1 });
    expect(status).toBe(403);
    expect(error?.code).toBe("42501");
  });
  it("admins see inactive products too", async () => {
    const { data } = await admin.client.from("products").select("id").eq("id", retired.id);
    expect(data).toEqual([{ id: retired.id }]);
  });
});

describe("customers: list of a technician ordered by company_name, insert", () => {
  it("a technician lists their customers by company_name", async () => {
    const { data, error } = await ana.client.from("customers").select("company_name").eq("technician_id", ana.id).order("company_name");
    expect(error).toBeNull();
    expect(data).toEqual([{ company_name: "Alfa Serviços Ltda" }, { company_name: "Zeta Comércio Ltda" }]);
  });
  it("another technician listing them gets nothing", async () => {
    const { data } = await bruno.client.from("customers").select("company_name").eq("technician_id", ana.id);
    expect(data).toEqual([]);
  });
  it("admins and super admins list any technician's customers", async () => {
    for (const reader of [admin, superAdmin]) {
      const { data } = await reader.client.from("customers").select("company_name").eq("technician_id", ana.id).order("company_name");
      expect(data).toEqual([{ company_name: "Alfa Serviços Ltda" }, { company_name: "Zeta Comércio Ltda" }]);
    }
  });
  it("a technician inserts a customer, stored normalised and owned by them", async () => {
    const cnpj = validCnpj(true);
    const { data, error, status } = await bruno.client
      .from("customers")
      .insert({ company_name: "Nova Era S.A.", contact_name: "Nina", email: " Nina@NovaEra.Test ", phone: "+55 (21) 3333-4444", cnpj: maskCnpj(cnpj).toLowerCase(), postal_code: "20040-002", state: "rj" })
      .select("technician_id, email, phone, cnpj, postal_code, state")
      .single();
    expect(error).toBeNull();
    expect(status).toBe(201);
    expect(data).toEqual({ technician_id: bruno.id, email: "nina@novaera.test", phone: "2133334444", cnpj, postal_code: "20040002", state: "RJ" });
  });
  it("an admin inserts a customer for a technician", async () => {
    const { data, error } = await admin.client
      .from("customers")
      .insert({ technician_id: bruno.id, company_name: "Cliente do Admin", contact_name: "C", email: "c@admin.test", phone: "11987654321", cnpj: maskCnpj(validCnpj()) })
      .select("technician_id")
      .single();
    expect(error).toBeNull();
    expect(data).toEqual({ technician_id: bruno.id });
  });
});

describe("proposals: list with customers, products, profiles newest first; insert", () => {
  it("a technician inserts a proposal and gets its code, total and link expiry (never the token: approval-token.test.ts)", async () => {
    const { data, error, status } = await ana.client
      .from("proposals")
      .insert({ customer_id: anaCustomers[1].id, product_id: product.id, monthly_value: 35, contract_months: 24 })
      .select("code, status, total_value, approval_token_expires_at, technician_id")
      .single();
    expect(error).toBeNull();
    expect(status).toBe(201);
    expect(data?.code).toMatch(/^PROP-\d{6}-\d{3,}$/);
    expect(data?.status).toBe("pending");
    expect(data?.total_value).toBe(840);
    expect(data?.technician_id).toBe(ana.id);
    const days = (new Date(data?.approval_token_expires_at as string).getTime() - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(29.9);
    expect(days).toBeLessThanOrEqual(30);
  });
  it("a technician lists their proposals with the embedded customer, product and profile, newest first", async () => {
    const { data, error } = await ana.client
      .from("proposals")
      .select("code, created_at, monthly_value, total_value, status, customers(company_name, cnpj), products(name), profiles(full_name)")
      .eq("technician_id", ana.id)
      .order("created_at", { ascending: false });
    expect(error).toBeNull();
    expect(data).toHaveLength(2);
    const rows = data ?? [];
    expect(new Date(rows[0].created_at as string).getTime()).toBeGreaterThanOrEqual(new Date(rows[1].created_at as string).getTime());
    expect(rows[1]).toMatchObject({
      code: anaProposal.code,
      monthly_value: 149.9,
      total_value: 1798.8,
      status: "pending",
      customers: { company_name: "Zeta Comércio Ltda", cnpj: anaCustomers[0].cnpj },
      products: { name: product.name },
      profiles: { full_name: "Ana Técnica" },
    });
  });
  it("another technician lists none of them; admins and super admins list them all", async () => {
    expect((await bruno.client.from("proposals").select("id").eq("technician_id", ana.id)).data).toEqual([]);
    for (const reader of [admin, superAdmin]) {
      const { data } = await reader.client.from("proposals").select("id, customers(company_name), products(name), profiles(full_name)").eq("technician_id", ana.id);
      expect(data).toHaveLength(2);
      expect(data?.every((row) => row.profiles !== null && row.customers !== null)).toBe(true);
    }
  });
  it("an anonymous client cannot list proposals at all", async () => {
    const { data, error, status } = await anonClient().from("proposals").select("id");
    expect(data).toBeNull();
    expect(status).toBe(401);
    expect(error?.code).toBe("42501");
  });
});

describe("commissions: list of a technician with orders → proposals → customers and products", () => {
  beforeAll(async () => {
    await setStatus(anaProposal.id, "approved");
    const { error } = await admin.client.from("proposals").update({ status: "active" }).eq("id", anaProposal.id);
    if (error) throw new Error(error.message);
  });

  it("activation by an admin gave the technician a commission with its order, proposal, customer and product", async () => {
    const { data, error } = await ana.client
      .from("commissions")
      .select("amount, status, carrier_payment_date, portal_payment_date, orders(total_value, proposals(code, customers(company_name), products(name)))")
      .eq("technician_id", ana.id);
    expect(error).toBeNull();
    expect(data).toEqual([
      {
        amount: 179.88,
        status: "pending",
        carrier_payment_date: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
        portal_payment_date: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
        orders: { total_value: 1798.8, proposals: { code: anaProposal.code, customers: { company_name: "Zeta Comércio Ltda" }, products: { name: product.name } } },
      },
    ]);
  });
  it("the payment dates are calculate_payment_dates of the activation day", async () => {
    const { data: commission } = await ana.client.from("commissions").select("sale_date, carrier_payment_date, portal_payment_date").eq("technician_id", ana.id).single();
    const { data: dates } = await ana.client.rpc("calculate_payment_dates", { sale_date: commission?.sale_date });
    expect(dates).toEqual({ carrier_payment_date: commission?.carrier_payment_date, portal_payment_date: commission?.portal_payment_date });
  });
  it("another technician sees none of it; admins and super admins do", async () => {
    expect((await bruno.client.from("commissions").select("id").eq("technician_id", ana.id)).data).toEqual([]);
    expect((await bruno.client.from("orders").select("id").eq("technician_id", ana.id)).data).toEqual([]);
    for (const reader of [admin, superAdmin]) {
      const { data } = await reader.client.from("commissions").select("amount, orders(proposals(customers(company_name), products(name)))").eq("technician_id", ana.id);
      expect(data).toEqual([{ amount: 179.88, orders: { proposals: { customers: { company_name: "Zeta Comércio Ltda" }, products: { name: product.name } } } }]);
    }
  });
  it("an admin records the payment", async () => {
    const { data, error } = await admin.client.from("commissions").update({ status: "paid" }).eq("technician_id", ana.id).select("status, paid_at").single();
    expect(error).toBeNull();
    expect(data?.status).toBe("paid");
    expect(data?.paid_at).not.toBeNull();
  });
});

describe("has_role (RPC with _user_id and _role)", () => {
  it("answers true or false for signed-in callers", async () => {
    expect((await ana.client.rpc("has_role", { _user_id: ana.id, _role: "technician" })).data).toBe(true);
    expect((await ana.client.rpc("has_role", { _user_id: ana.id, _role: "admin" })).data).toBe(false);
    expect((await ana.client.rpc("has_role", { _user_id: admin.id, _role: "admin" })).data).toBe(true);
    expect((await ana.client.rpc("has_role", { _user_id: superAdmin.id, _role: "super_admin" })).data).toBe(true);
  });
  it("refuses an unknown role value (22P02) and anonymous callers (42501)", async () => {
    const bad = await ana.client.rpc("has_role", { _user_id: ana.id, _role: "owner" });
    expect(bad.error?.code).toBe("22P02");
    expect(bad.status).toBe(400);
    const anon = await anonClient().rpc("has_role", { _user_id: ana.id, _role: "admin" });
    expect(anon.status).toBe(401);
    expect(anon.error?.code).toBe("42501");
  });
});

describe("the service role", () => {
  it("bypasses row-level security for server-side jobs", async () => {
    const { count } = await serviceClient().from("proposals").select("*", { count: "exact", head: true }).eq("technician_id", ana.id);
    expect(count).toBe(2);
  });
});
