import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { type TestUser } from "../helpers/clients.ts";
import { env } from "../helpers/env.ts";
import { callFunction, type CaughtMessage, caughtFor, createCustomer, createPortalUser, createProposal, pdfText, pdfUrls, setStatus, technicianWithProposal } from "./factories.ts";

/**
 * send-proposal-email: the real `resend` client posts to the local mail catcher, so the caught
 * message is exactly what Resend would have been asked to send. The message carries the approval
 * link, so it goes only to the customer's e-mail on file.
 */

let fixture: Awaited<ReturnType<typeof technicianWithProposal>>;
let otherTechnician: TestUser;
let admin: TestUser;

beforeAll(async () => {
  fixture = await technicianWithProposal("Ana E-mail");
  [otherTechnician, admin] = await Promise.all([createPortalUser("Bruno E-mail", "technician"), createPortalUser("Carla E-mail", "admin")]);
});

async function send(token: string, proposalId: string, recipientEmail: string): Promise<Response> {
  return await callFunction("send-proposal-email", { token, body: { proposalId, recipientEmail } });
}

describe("send-proposal-email", () => {
  let recipient: string;
  let answer: { id: string; proposalId: string; recipientEmail: string };
  let message: CaughtMessage;
  let token: string;
  const link = () => `${env.url}/functions/v1/approve-proposal?token=${token}`;

  beforeAll(async () => {
    recipient = fixture.customer.email;
    const response = await send(fixture.technician.accessToken, fixture.proposal.id, recipient);
    expect(response.status).toBe(200);
    answer = (await response.json()) as typeof answer;
    const caught = await caughtFor(recipient);
    expect(caught).toHaveLength(1);
    message = caught[0];
    // The token is issued for this message (only its digest is stored), so it is read from the message.
    token = /approve-proposal\?token=([A-Za-z0-9_-]{43})/.exec(message.text ?? "")?.[1] ?? "";
  });

  it("answers with the id the mail service gave the message", () => {
    expect(answer).toEqual({ id: message.id, proposalId: fixture.proposal.id, recipientEmail: recipient });
  });
  it("sends one message to the customer with the proposal in the subject", () => {
    expect(message.to).toEqual([recipient]);
    expect(message.from).toBe("Orbita Propostas <propostas@orbita.local>");
    expect(message.subject).toBe(`Proposta ${fixture.proposal.code} – ${fixture.product.name}`);
    expect(message.tags).toEqual([{ name: "proposal_code", value: fixture.proposal.code }]);
  });
  it("has a plain-text body with the facts and the approval link", () => {
    expect(message.text).toContain(`Olá, ${fixture.customer.contact_name}!`);
    expect(message.text).toContain("Valor total: R$ 1.200,00");
    expect(message.text).toContain(link());
  });
  it("has an HTML body with the same facts and a link button", () => {
    expect(message.html).toContain('<html lang="pt-BR">');
    expect(message.html).toContain(fixture.customer.company_name);
    expect(message.html).toContain(`href="${link()}"`);
  });
  it("attaches the customer's copy of the PDF, which carries the approval link", async () => {
    expect(message.attachments).toEqual([expect.objectContaining({ index: 0, filename: `${fixture.proposal.code}.pdf`, content_type: "application/pdf" })]);
    const attachment = new Uint8Array(await (await fetch(`${env.mailUrl}/api/messages/${message.id}/attachments/0`)).arrayBuffer());
    const text = pdfText(attachment);
    expect(text).toContain(fixture.proposal.code);
    expect(text).toContain("Valor total: R$ 1.200,00");
    expect(text.replace(/ /g, "")).toContain(link());
    // One link annotation per line the URL takes: its width, and so its wrapping, varies with the token.
    const urls = pdfUrls(attachment);
    expect(urls.length).toBeGreaterThan(0);
    expect(new Set(urls)).toEqual(new Set([link()]));
  });
  it("the link in the message opens the approval page; the factory's earlier token was replaced", async () => {
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const page = await fetch(link());
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(fixture.proposal.code);
    const replaced = await fetch(`${env.url}/functions/v1/approve-proposal?token=${fixture.proposal.approval_token}`);
    expect(replaced.status).toBe(404);
    await replaced.body?.cancel();
  });
  it("an admin may send it too, to the same address; the newest message holds the only working link", async () => {
    const first = link();
    expect((await send(admin.accessToken, fixture.proposal.id, recipient)).status).toBe(200);
    const caught = await caughtFor(recipient);
    expect(caught).toHaveLength(2);
    const newest = caught.map((each) => /approve-proposal\?token=([A-Za-z0-9_-]{43})/.exec(each.text ?? "")?.[1]).find((each) => each !== token);
    expect(newest).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const old = await fetch(first);
    expect(old.status).toBe(404);
    await old.body?.cancel();
    const fresh = await fetch(`${env.url}/functions/v1/approve-proposal?token=${newest}`);
    expect(fresh.status).toBe(200);
    await fresh.body?.cancel();
  });
  it("the customer's address typed in another case is the same address: the message goes to the one on file", async () => {
    const { technician, customer, proposal } = await technicianWithProposal("Ana Maiúsculas");
    const response = await send(technician.accessToken, proposal.id, customer.email.toUpperCase());
    expect(response.status).toBe(200);
    expect(((await response.json()) as { recipientEmail: string }).recipientEmail).toBe(customer.email);
    expect((await caughtFor(customer.email)).map((caught) => caught.to)).toEqual([[customer.email]]);
  });
});

describe("send-proposal-email to anyone but the customer", () => {
  it("is refused with 422 recipient_not_customer naming the address on file, and nothing is sent", async () => {
    const { technician, customer, proposal } = await technicianWithProposal("Ana Desvio");
    for (const elsewhere of [technician.email, `outro-${randomUUID().slice(0, 8)}@cliente.test`]) {
      const response = await send(technician.accessToken, proposal.id, elsewhere);
      expect(response.status).toBe(422);
      expect(await response.json()).toEqual({
        error: {
          code: "recipient_not_customer",
          message: `Proposal ${proposal.code} carries its approval link, so it is sent only to the customer's e-mail on file, ${customer.email}`,
          details: [{ path: "recipientEmail", message: `must be the customer's e-mail on file, ${customer.email}` }],
        },
      });
      expect(await caughtFor(elsewhere)).toEqual([]);
    }
    expect(await caughtFor(customer.email)).toEqual([]);
  });
  it("holds for admins too", async () => {
    const response = await send(admin.accessToken, fixture.proposal.id, admin.email);
    expect(response.status).toBe(422);
    expect(await caughtFor(admin.email)).toEqual([]);
  });
  it("another customer of the same technician is not the proposal's customer", async () => {
    const other = await createCustomer(fixture.technician);
    const response = await send(fixture.technician.accessToken, fixture.proposal.id, other.email);
    expect(response.status).toBe(422);
    expect(await caughtFor(other.email)).toEqual([]);
  });
});

describe("send-proposal-email refusals", () => {
  it("another technician gets the 404 of a proposal that does not exist, and nothing is sent", async () => {
    const before = (await caughtFor(fixture.customer.email)).length;
    const response = await send(otherTechnician.accessToken, fixture.proposal.id, fixture.customer.email);
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: { code: "proposal_not_found", message: `No proposal ${fixture.proposal.id}` } });
    expect(await caughtFor(fixture.customer.email)).toHaveLength(before);
  });
  it("a proposal that is no longer pending is 409", async () => {
    const proposal = await createProposal(fixture.technician, fixture.customer.id, fixture.product.id);
    await setStatus(proposal.id, "cancelled");
    const response = await send(fixture.technician.accessToken, proposal.id, fixture.customer.email);
    expect(response.status).toBe(409);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("proposal_not_pending");
  });
  it("an invalid recipient is 400, a missing token 401", async () => {
    const invalid = await send(fixture.technician.accessToken, fixture.proposal.id, "not-an-email");
    expect(invalid.status).toBe(400);
    expect(((await invalid.json()) as { error: { details: { path: string }[] } }).error.details[0].path).toBe("recipientEmail");
    expect((await send(env.anonKey, fixture.proposal.id, "x@cliente.test")).status).toBe(401);
  });
});
