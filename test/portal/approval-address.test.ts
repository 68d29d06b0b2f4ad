import { beforeAll, describe, expect, it } from "vitest";
import { serviceClient, type TestUser } from "../helpers/clients.ts";
import { callFunction, caughtFor, createCustomer, createPortalUser, createProposal, pdfText, technicianWithProposal } from "./factories.ts";

/**
 * The approval link goes only to the customer's e-mail on file, so that address must not move
 * while a link is open: through supabase-js, as a portal front end would, a technician cannot
 * point the customer (or the proposal) at an address they read, and so cannot get the link of
 * their own proposal from any function. The rules are in the database (10-portal-approval-address).
 */
let fixture: Awaited<ReturnType<typeof technicianWithProposal>>;
let admin: TestUser;

beforeAll(async () => {
  fixture = await technicianWithProposal("Ana Endereço");
  admin = await createPortalUser("Carla Endereço", "admin");
});

async function emailOnFile(customerId: string): Promise<string> {
  const { data, error } = await serviceClient().from("customers").select("email").eq("id", customerId).single();
  if (error) throw new Error(`reading the customer: ${error.message}`);
  return (data as { email: string }).email;
}

describe("a customer's e-mail while one of its proposals awaits an answer", () => {
  it("cannot be changed to the technician's own address: 400 P0001 naming the proposal, and the address on file stays", async () => {
    const { data, error, status } = await fixture.technician.client.from("customers").update({ email: fixture.technician.email }).eq("id", fixture.customer.id).select("email");
    expect(status).toBe(400);
    expect(data).toBeNull();
    expect(error).toMatchObject({
      code: "P0001",
      message: `The e-mail of customer "${fixture.customer.company_name}" cannot change while proposals await its answer (${fixture.proposal.code})`,
      hint: "Cancel those proposals, change the e-mail, then make new proposals.",
    });
    expect(await emailOnFile(fixture.customer.id)).toBe(fixture.customer.email);
  });
  it("cannot be changed by an admin either", async () => {
    const { error, status } = await admin.client.from("customers").update({ email: admin.email }).eq("id", fixture.customer.id);
    expect(status).toBe(400);
    expect(error?.code).toBe("P0001");
    expect(await emailOnFile(fixture.customer.id)).toBe(fixture.customer.email);
  });
  it("accepts the same address typed in capitals, and edits of the other fields", async () => {
    const { data, error } = await fixture.technician.client
      .from("customers")
      .update({ email: fixture.customer.email.toUpperCase(), contact_name: "Marcos Pereira" })
      .eq("id", fixture.customer.id)
      .select("email, contact_name")
      .single();
    expect(error).toBeNull();
    expect(data).toEqual({ email: fixture.customer.email, contact_name: "Marcos Pereira" });
  });
  it("changes once the open proposals are cancelled, and the next proposal goes to the new address", async () => {
    const { technician, customer, product, proposal } = await technicianWithProposal("Ana Mudança");
    const cancel = await technician.client.from("proposals").update({ status: "cancelled" }).eq("id", proposal.id);
    expect(cancel.error).toBeNull();
    const newAddress = `financeiro-${customer.id.slice(0, 8)}@cliente.test`;
    const change = await technician.client.from("customers").update({ email: newAddress }).eq("id", customer.id).select("email").single();
    expect(change.error).toBeNull();
    expect(change.data).toEqual({ email: newAddress });

    const next = await createProposal(technician, customer.id, product.id);
    const sent = await callFunction("send-proposal-email", { token: technician.accessToken, body: { proposalId: next.id, recipientEmail: newAddress } });
    expect(sent.status).toBe(200);
    expect(await caughtFor(newAddress)).toHaveLength(1);
  });
});

describe("a pending proposal's customer", () => {
  it("cannot be swapped for a customer whose e-mail the technician controls (400 P0001), so the proposal keeps its customer", async () => {
    const decoy = await createCustomer(fixture.technician, { email: fixture.technician.email });
    const { error, status } = await fixture.technician.client.from("proposals").update({ customer_id: decoy.id }).eq("id", fixture.proposal.id);
    expect(status).toBe(400);
    expect(error).toMatchObject({ code: "P0001", message: `The customer of proposal ${fixture.proposal.code} cannot change` });
    const { data } = await fixture.technician.client.from("proposals").select("customer_id").eq("id", fixture.proposal.id).single();
    expect(data).toEqual({ customer_id: fixture.customer.id });
  });
});

describe("a technician trying to approve their own proposal", () => {
  it("gets the link from no function and no address of theirs receives it", async () => {
    const { technician, proposal } = await technicianWithProposal("Ana Atalho");
    const pdf = await callFunction("generate-proposal-pdf", { token: technician.accessToken, body: { proposalId: proposal.id } });
    expect(pdf.status).toBe(200);
    const { signedUrl } = (await pdf.json()) as { signedUrl: string };
    expect(pdfText(new Uint8Array(await (await fetch(signedUrl)).arrayBuffer())).replace(/ /g, "")).not.toContain(proposal.approval_token);

    const email = await callFunction("send-proposal-email", { token: technician.accessToken, body: { proposalId: proposal.id, recipientEmail: technician.email } });
    expect(email.status).toBe(422);
    await email.body?.cancel();
    expect(await caughtFor(technician.email)).toEqual([]);
  });
});
