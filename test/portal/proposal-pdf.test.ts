import { beforeAll, describe, expect, it } from "vitest";
import { serviceClient, type TestUser } from "../helpers/clients.ts";
import { env } from "../helpers/env.ts";
import { callFunction, createPortalUser, pdfPageSize, pdfText, pdfUrls, technicianWithProposal } from "./factories.ts";

/**
 * generate-proposal-pdf: an A4 PDF with the proposal's facts, stored in the private bucket and
 * handed out as a signed URL; only the proposal's technician or an admin may ask for it. It never
 * carries the approval link, which goes only to the customer's e-mail (proposal-email.test.ts).
 */
let fixture: Awaited<ReturnType<typeof technicianWithProposal>>;
let otherTechnician: TestUser;
let admin: TestUser;
let superAdmin: TestUser;

interface PdfAnswer {
  proposalId: string;
  code: string;
  path: string;
  signedUrl: string;
  expiresIn: number;
}

beforeAll(async () => {
  fixture = await technicianWithProposal("Ana PDF");
  [otherTechnician, admin, superAdmin] = await Promise.all([
    createPortalUser("Bruno PDF", "technician"),
    createPortalUser("Carla PDF", "admin"),
    createPortalUser("Diego PDF", "super_admin"),
  ]);
});

async function generate(token: string | undefined, body: unknown = { proposalId: fixture.proposal.id }): Promise<Response> {
  return await callFunction("generate-proposal-pdf", { token, body });
}

describe("generate-proposal-pdf", () => {
  let answer: PdfAnswer;
  let bytes: Uint8Array;

  beforeAll(async () => {
    const response = await generate(fixture.technician.accessToken);
    expect(response.status).toBe(200);
    answer = (await response.json()) as PdfAnswer;
    const download = await fetch(answer.signedUrl);
    expect(download.status).toBe(200);
    expect(download.headers.get("content-type")).toContain("application/pdf");
    bytes = new Uint8Array(await download.arrayBuffer());
  });

  it("answers with the storage path and a signed URL of the gateway", () => {
    expect(answer).toMatchObject({ proposalId: fixture.proposal.id, code: fixture.proposal.code, path: `${fixture.technician.id}/${fixture.proposal.id}.pdf`, expiresIn: 3600 });
    expect(answer.signedUrl.startsWith(`${env.url}/storage/v1/object/sign/proposal-pdfs/`)).toBe(true);
  });
  it("is a one-page A4 PDF", () => {
    expect(new TextDecoder().decode(bytes.slice(0, 5))).toBe("%PDF-");
    expect(pdfPageSize(bytes)).toContain("(A4)");
  });
  it("says who, what, how much, how long, and where the approval link goes (pdftotext)", () => {
    const text = pdfText(bytes);
    expect(text).toContain("Proposta comercial");
    expect(text).toContain(fixture.proposal.code);
    expect(text).toContain(`Razão social: ${fixture.customer.company_name}`);
    const cnpj = fixture.customer.cnpj;
    expect(text).toContain(`CNPJ: ${cnpj.slice(0, 2)}.${cnpj.slice(2, 5)}.${cnpj.slice(5, 8)}/${cnpj.slice(8, 12)}-${cnpj.slice(12)}`);
    expect(text).toContain(fixture.product.name);
    expect(text).toContain("Valor mensal: R$ 100,00");
    expect(text).toContain("Prazo do contrato: 12 meses");
    expect(text).toContain("Valor total: R$ 1.200,00");
    expect(text).toContain("Ana PDF");
    expect(text).toContain(`O link para aprovar ou recusar esta proposta é enviado somente ao e-mail do cliente: ${fixture.customer.email}.`);
  });
  it("does not carry the approval link or its token, in the text or anywhere in the file", () => {
    const text = pdfText(bytes).replace(/ /g, "");
    expect(text).not.toContain("approve-proposal");
    expect(text).not.toContain(fixture.proposal.approval_token);
    expect(pdfUrls(bytes)).toEqual([]);
  });
  it("is stored in the private bucket, out of reach of the technician's own storage client", async () => {
    const stored = await serviceClient().storage.from("proposal-pdfs").download(answer.path);
    expect(stored.error).toBeNull();
    expect(stored.data?.size).toBe(bytes.byteLength);
    const direct = await fixture.technician.client.storage.from("proposal-pdfs").download(answer.path);
    expect(direct.data).toBeNull();
    expect(direct.error).not.toBeNull();
  });
  it("admins and super admins may generate it, without the link too; the file is replaced, not duplicated", async () => {
    for (const user of [admin, superAdmin]) {
      const response = await generate(user.accessToken);
      expect(response.status).toBe(200);
      const theirs = (await response.json()) as PdfAnswer;
      expect(theirs.path).toBe(answer.path);
      const text = pdfText(new Uint8Array(await (await fetch(theirs.signedUrl)).arrayBuffer())).replace(/ /g, "");
      expect(text).toContain(fixture.proposal.code);
      expect(text).not.toContain(fixture.proposal.approval_token);
    }
    const listing = await serviceClient().storage.from("proposal-pdfs").list(fixture.technician.id);
    expect(listing.data?.map((file) => file.name)).toEqual([`${fixture.proposal.id}.pdf`]);
  });
});

describe("generate-proposal-pdf refusals", () => {
  it("another technician gets exactly the 404 of a proposal that does not exist", async () => {
    const response = await generate(otherTechnician.accessToken);
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: { code: "proposal_not_found", message: `No proposal ${fixture.proposal.id}` } });
  });
  it("the anon key alone gets 401, and no token at all too", async () => {
    const anon = await generate(env.anonKey);
    expect(anon.status).toBe(401);
    expect(((await anon.json()) as { error: { code: string } }).error.code).toBe("unauthorized");
    const none = await fetch(`${env.url}/functions/v1/generate-proposal-pdf`, { method: "POST", body: JSON.stringify({ proposalId: fixture.proposal.id }) });
    expect(none.status).toBe(401);
  });
  it("an unknown proposal is 404 and a malformed body 400", async () => {
    expect((await generate(fixture.technician.accessToken, { proposalId: "5e3d9999-0000-4000-8000-000000000000" })).status).toBe(404);
    const invalid = await generate(fixture.technician.accessToken, { proposalId: "not-a-uuid" });
    expect(invalid.status).toBe(400);
    expect(((await invalid.json()) as { error: { code: string } }).error.code).toBe("invalid_body");
    const method = await callFunction("generate-proposal-pdf", { token: fixture.technician.accessToken, method: "GET" });
    expect(method.status).toBe(405);
  });
});
