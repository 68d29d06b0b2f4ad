import { beforeAll, describe, expect, it } from "vitest";
import { serviceClient, type TestUser } from "../helpers/clients.ts";
import { env } from "../helpers/env.ts";
import { createCustomer, createPortalUser, createProduct, createProposal, type CustomerRow, issueApprovalToken, type ProductRow, type ProposalRow, readProposal } from "./factories.ts";

/**
 * The approval token is the customer's credential, stored only as a digest in a private table (as
 * API keys are), so no signed-in user (technician, admin or super admin) can get it through the
 * data API, while the everyday supabase-js idioms (`.select()`, `insert().select()`,
 * `update().select()`, `proposals(*)` embeddings) work. They used to answer 42501 for everyone,
 * because the clear token was a column hidden by a column privilege. The link reaches the customer
 * through the e-mail (proposal-email.test.ts).
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

/** Every proposal column a client reads with `*`: nothing secret among them. */
const PROPOSAL_COLUMNS = [
  "activated_at", "approval_token_expires_at", "approval_token_used_at", "cancelled_at", "code", "contract_months", "created_at",
  "customer_id", "id", "monthly_value", "notes", "product_id", "status", "technician_id", "total_value", "updated_at",
];

describe("select * on proposals, with supabase-js as is", () => {
  it("insert().select() creates the proposal and returns every column, without the token", async () => {
    const { data, error, status } = await technician.client.from("proposals").insert(newProposal()).select();
    expect(error).toBeNull();
    expect(status).toBe(201);
    expect(data).toHaveLength(1);
    expect(Object.keys(data?.[0] ?? {}).sort()).toEqual(PROPOSAL_COLUMNS);
    expect(data?.[0]).toMatchObject({ status: "pending", technician_id: technician.id, total_value: 480 });
  });
  it("select() and select('*') read every column, for the technician, an admin and a super admin", async () => {
    for (const reader of [technician, admin, superAdmin]) {
      const { data, error, status } = await reader.client.from("proposals").select().eq("id", proposal.id);
      expect(error).toBeNull();
      expect(status).toBe(200);
      expect(data).toEqual([expect.objectContaining({ id: proposal.id, code: proposal.code })]);
      expect(Object.keys(data?.[0] ?? {}).sort()).toEqual(PROPOSAL_COLUMNS);
      expect((await reader.client.from("proposals").select("*").eq("id", proposal.id).single()).error).toBeNull();
    }
  });
  it("update().select() applies the update and returns the row", async () => {
    const { data, error } = await technician.client.from("proposals").update({ notes: "lido" }).eq("id", proposal.id).select().single();
    expect(error).toBeNull();
    expect(data).toMatchObject({ id: proposal.id, notes: "lido" });
    expect((await technician.client.from("proposals").select("notes").eq("id", proposal.id).single()).data).toEqual({ notes: "lido" });
  });
  it("customers?select=*,proposals(*) and commissions → orders → proposals(*) embed the proposals", async () => {
    const { data, error } = await technician.client.from("customers").select("*, proposals(*)").eq("id", customer.id).single();
    expect(error).toBeNull();
    expect((data?.proposals as { id: string }[]).map((row) => row.id)).toContain(proposal.id);
    const commissions = await admin.client.from("commissions").select("*, orders(*, proposals(*))").limit(5);
    expect(commissions.error).toBeNull();
    const raw = await fetch(`${env.url}/rest/v1/customers?select=*,proposals(*)&id=eq.${customer.id}`, {
      headers: { apikey: env.anonKey, authorization: `Bearer ${technician.accessToken}` },
    });
    expect(raw.status).toBe(200);
  });
  it("no answer carries the token, and no column is named after it", async () => {
    const { data } = await admin.client.from("customers").select("*, proposals(*)").eq("id", customer.id);
    const text = JSON.stringify(data);
    expect(text).not.toContain(proposal.approval_token);
    expect(text).not.toContain('"approval_token"');
  });
});

describe("the token stays out of reach", () => {
  it("the digest table is not reachable through the data API, for any signed-in user", async () => {
    for (const reader of [technician, admin, superAdmin]) {
      const { data, error } = await reader.client.schema("portal_private" as "public").from("proposal_approval_tokens").select("*");
      expect(data).toBeNull();
      expect(error).not.toBeNull();
    }
  });
  it("no signed-in user may issue a token (only server code, which e-mails it to the customer)", async () => {
    for (const caller of [technician, admin, superAdmin]) {
      const { data, error } = await caller.client.rpc("issue_approval_token", { _proposal_id: proposal.id });
      expect(data).toBeNull();
      expect(error?.code).toBe("42501");
    }
  });
  it("the token still opens the approval page; a newly issued one replaces it", async () => {
    const page = (token: string) => fetch(`${env.url}/functions/v1/approve-proposal?token=${encodeURIComponent(token)}`);
    const before = await page(proposal.approval_token);
    expect(before.status).toBe(200);
    await before.body?.cancel();
    const token = await issueApprovalToken(proposal.id);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const replaced = await page(proposal.approval_token);
    expect(replaced.status).toBe(404);
    await replaced.body?.cancel();
    const fresh = await page(token);
    expect(fresh.status).toBe(200);
    await fresh.body?.cancel();
    proposal = { ...proposal, approval_token: token };
  });
  it("knowing the customer's e-mail approves nothing without the token, and the proposal stays pending", async () => {
    const { data } = await technician.client.rpc("respond_to_proposal", { _token: "guessed-token", _email: customer.email, _action: "approve" });
    expect(data).toEqual({ outcome: "unknown_token", proposal_code: null, proposal_status: null });
    expect((await readProposal(proposal.id)).status).toBe("pending");
  });
  it("a token is issued only for a pending proposal", async () => {
    const other = await createProposal(technician, customer.id, product.id);
    expect((await serviceClient().from("proposals").update({ status: "cancelled" }).eq("id", other.id)).error).toBeNull();
    const { error } = await serviceClient().rpc("issue_approval_token", { _proposal_id: other.id });
    expect(error?.code).toBe("P0001");
  });
  it("the approval page shows nothing without the token", async () => {
    const page = await fetch(`${env.url}/functions/v1/approve-proposal?token=guessed-token`);
    expect(page.status).toBe(404);
    await page.body?.cancel();
  });
});
