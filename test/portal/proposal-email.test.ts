import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { type TestUser } from "../helpers/clients.ts";
import { env } from "../helpers/env.ts";
import { callFunction, createPortalUser, createProposal, pdfText, setStatus, technicianWithProposal } from "./factories.ts";

/**
 * send-proposal-email: the real `resend` client posts to the local mail catcher, so the caught
 * message is exactly what Resend would have been asked to send.
 */
interface CaughtMessage {
  id: string;
  from: string;
  to: string[];
  subject: string;
  html: string | null;
  text: string | null;
  tags: { name: string; value: string }[];
  attachments: { index: number; filename: string; content_type: string; size: number }[];
}

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

async function caughtFor(recipient: string): Promise<CaughtMessage[]> {
  const list = (await (await fetch(`${env.mailUrl}/api/messages?to=${encodeURIComponent(recipient)}`)).json()) as { id: string }[];
  return await Promise.all(list.map(async ({ id }) => (await (await fetch(`${env.mailUrl}/api/messages/${id}`)).json()) as CaughtMessage));
}

describe("send-proposal-email", () => {
  const recipient = `cliente-${randomUUID().slice(0, 8)}@cliente.test`;
  let answer: { id: string; proposalId: string; recipientEmail: string };
  let message: CaughtMessage;
  const link = () => `${env.url}/functions/v1/approve-proposal?token=${fixture.proposal.approval_token}`;

  beforeAll(async () => {
    const response = await send(fixture.technician.accessToken, fixture.proposal.id, recipient);
    expect(response.status).toBe(200);
    answer = (await response.json()) as typeof answer;
    const caught = await caughtFor(recipient);
    expect(caught).toHaveLength(1);
    message = caught[0];
  });

  it("answers with the id the mail service gave the message", () => {
    expect(answer).toEqual({ id: message.id, proposalId: fixture.proposal.id, recipientEmail: recipient });
  });
  it("sends one message to the recipient with the proposal in the subject", () => {
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
  it("attaches the proposal PDF", async () => {
    expect(message.attachments).toEqual([expect.objectContaining({ index: 0, filename: `${fixture.proposal.code}.pdf`, content_type: "application/pdf" })]);
    const attachment = await fetch(`${env.mailUrl}/api/messages/${message.id}/attachments/0`);
    const text = pdfText(new Uint8Array(await attachment.arrayBuffer()));
    expect(text).toContain(fixture.proposal.code);
    expect(text).toContain("Valor total: R$ 1.200,00");
  });
  it("an admin may send it too", async () => {
    const adminRecipient = `admin-${randomUUID().slice(0, 8)}@cliente.test`;
    expect((await send(admin.accessToken, fixture.proposal.id, adminRecipient)).status).toBe(200);
    expect(await caughtFor(adminRecipient)).toHaveLength(1);
  });
});

describe("send-proposal-email refusals", () => {
  it("another technician gets 403 and nothing is sent", async () => {
    const recipient = `nao-${randomUUID().slice(0, 8)}@cliente.test`;
    const response = await send(otherTechnician.accessToken, fixture.proposal.id, recipient);
    expect(response.status).toBe(403);
    expect(await caughtFor(recipient)).toEqual([]);
  });
  it("a proposal that is no longer pending is 409", async () => {
    const proposal = await createProposal(fixture.technician, fixture.customer.id, fixture.product.id);
    await setStatus(proposal.id, "cancelled");
    const response = await send(fixture.technician.accessToken, proposal.id, "x@cliente.test");
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
