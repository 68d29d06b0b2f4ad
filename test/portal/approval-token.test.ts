import { beforeAll, describe, expect, it } from "vitest";
import { serviceClient, type TestUser } from "../helpers/clients.ts";
import { env } from "../helpers/env.ts";
import { countRows, createCustomer, createPortalUser, createProduct, createProposal, type CustomerRow, type ProductRow, type ProposalRow, readProposal } from "./factories.ts";

/**
 * The approval token is the customer's credential: no signed-in user (technician, admin or super
 * admin) can get it through the data API, by any request shape supabase-js or PostgREST offers.
 * It used to come back from `insert(...).select()`, so a technician could approve their own
 * proposal with the customer's e-mail, which they know. The link still reaches the customer
 * through the e-mail and PDF (proposal-email.test.ts, proposal-pdf.test.ts).
 */
let technician: TestUser;
let admin: TestUser;
let superAdmin: TestUser;
let product: ProductRow;
let customer: CustomerRow;
let proposal: ProposalRow;

beforeAll(async () => {
  [technician, admin, superAdmin] = await Promise.all([
    createPortalUser("Ana Token", "technician"),
    createPortalUser("Carla Token", "admin"),
    createPortalUser("Diego Token", "super_admin"),
  ]);
  product = await createProduct();
  customer = await createCustomer(technician);
  proposal = await createProposal(technician, customer.id, product.id);
});

const newProposal = () => ({ customer_id: customer.id, product_id: product.id, monthly_value: 80, contract_months: 6 });

/** PostgREST's answer when a query touches the token column: 42501, HTTP 403 for a signed-in user. */
function expectRefused(result: { data: unknown; error: { code?: string } | null; status: number }): void {
  expect(result.error?.code).toBe("42501");
  expect(result.status).toBe(403);
  expect(result.data).toBeNull();
}

describe("a technician creating a proposal", () => {
  it("cannot get the token back with return=representation (insert().select()), and nothing is created", async () => {
    const before = await countRows(serviceClient(), "proposals", "technician_id", technician.id);
    expectRefused(await technician.client.from("proposals").insert(newProposal()).select());
    expectRefused(await technician.client.from("proposals").insert(newProposal()).select("id, approval_token").single());
    expect(await countRows(serviceClient(), "proposals", "technician_id", technician.id)).toBe(before);
  });
  it("gets every other column back, and the proposal has a token only the server reads", async () => {
    const { data, error, status } = await technician.client.from("proposals").insert(newProposal()).select("id, code, status, approval_token_expires_at").single();
    expect(error).toBeNull();
    expect(status).toBe(201);
    expect(Object.keys(data ?? {}).sort()).toEqual(["approval_token_expires_at", "code", "id", "status"]);
    expect((await readProposal((data as { id: string }).id)).approval_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
  it("cannot read it back from an update with return=representation, and the update is not applied", async () => {
    expectRefused(await technician.client.from("proposals").update({ notes: "lido?" }).eq("id", proposal.id).select());
    const { data } = await technician.client.from("proposals").select("notes").eq("id", proposal.id).single();
    expect(data).toEqual({ notes: null });
  });
});

describe("reading proposals", () => {
  it("select=* and select=approval_token are refused", async () => {
    expectRefused(await technician.client.from("proposals").select("*").eq("id", proposal.id));
    expectRefused(await technician.client.from("proposals").select("approval_token").eq("id", proposal.id));
  });
  it("filtering or sorting on the token is refused (no guessing it a character at a time)", async () => {
    expectRefused(await technician.client.from("proposals").select("id").like("approval_token", `${proposal.approval_token.slice(0, 1)}*`));
    expectRefused(await technician.client.from("proposals").select("id").order("approval_token"));
  });
  it("embedding proposals(*) or proposals(approval_token) from customers and commissions is refused", async () => {
    expectRefused(await technician.client.from("customers").select("id, proposals(*)").eq("id", customer.id));
    expectRefused(await technician.client.from("customers").select("id, proposals(approval_token)").eq("id", customer.id));
    expectRefused(await technician.client.from("commissions").select("id, orders(proposals(*))"));
  });
  it("admins and super admins cannot read it either", async () => {
    for (const reader of [admin, superAdmin]) {
      expectRefused(await reader.client.from("proposals").select("approval_token").eq("id", proposal.id));
    }
  });
  it("the spec's listing, with embedded customers, products and profiles, still works", async () => {
    const { data, error } = await technician.client
      .from("proposals")
      .select("id, code, status, total_value, created_at, approval_token_expires_at, customers(company_name), products(name), profiles(full_name)")
      .eq("technician_id", technician.id)
      .order("created_at", { ascending: false });
    expect(error).toBeNull();
    expect(data?.find((row) => row.id === proposal.id)).toMatchObject({
      code: proposal.code,
      customers: { company_name: customer.company_name },
      products: { name: product.name },
      profiles: { full_name: "Ana Token" },
    });
    expect(JSON.stringify(data)).not.toContain(proposal.approval_token);
  });
  it("embedding proposals with named columns still works", async () => {
    const { data, error } = await technician.client.from("customers").select("id, proposals(id, code, status)").eq("id", customer.id).single();
    expect(error).toBeNull();
    expect((data?.proposals as { id: string }[]).map((row) => row.id)).toContain(proposal.id);
  });
});

describe("without the token", () => {
  it("knowing the customer's e-mail approves nothing, and the proposal stays pending", async () => {
    const { data } = await technician.client.rpc("respond_to_proposal", { _token: "guessed-token", _email: customer.email, _action: "approve" });
    expect(data).toEqual({ outcome: "unknown_token", proposal_code: null, proposal_status: null });
    expect((await readProposal(proposal.id)).status).toBe("pending");
  });
  it("the approval page shows nothing without the token", async () => {
    const page = await fetch(`${env.url}/functions/v1/approve-proposal?token=guessed-token`);
    expect(page.status).toBe(404);
    await page.body?.cancel();
  });
});
