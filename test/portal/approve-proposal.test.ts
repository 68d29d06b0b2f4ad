import { beforeAll, describe, expect, it } from "vitest";
import { serviceClient } from "../helpers/clients.ts";
import { env } from "../helpers/env.ts";
import { caughtFor, createProposal, readProposal, setStatus, technicianWithProposal } from "./factories.ts";

/**
 * The approval link over plain HTTP, the way a browser without JavaScript uses it: GET renders the
 * page, POST application/x-www-form-urlencoded answers it. No Authorization header is sent (the
 * function has verify_jwt = false; the token authorises).
 */
function link(token: string | null): string {
  return `${env.url}/functions/v1/approve-proposal${token === null ? "" : `?token=${encodeURIComponent(token)}`}`;
}

async function open(token: string | null): Promise<{ status: number; html: string; headers: Headers }> {
  const response = await fetch(link(token));
  return { status: response.status, html: await response.text(), headers: response.headers };
}

async function post(token: string, fields: Record<string, string>, contentType = "application/x-www-form-urlencoded"): Promise<{ status: number; html: string }> {
  const response = await fetch(link(token), { method: "POST", headers: { "content-type": contentType }, body: new URLSearchParams(fields).toString() });
  return { status: response.status, html: await response.text() };
}

let fixture: Awaited<ReturnType<typeof technicianWithProposal>>;

beforeAll(async () => {
  fixture = await technicianWithProposal("Ana Aprovação");
});

async function freshProposal() {
  return await createProposal(fixture.technician, fixture.customer.id, fixture.product.id, { monthly_value: 149.9, contract_months: 12 });
}

describe("GET", () => {
  it("renders the proposal summary and the form, in Portuguese, without scripts", async () => {
    const { status, html, headers } = await open(fixture.proposal.approval_token);
    expect(status).toBe(200);
    expect(headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(html).toContain('<html lang="pt-BR">');
    expect(html).toContain(`<h1>Proposta ${fixture.proposal.code}</h1>`);
    expect(html).toContain(fixture.customer.company_name);
    expect(html).toContain(fixture.product.name);
    expect(html).toContain("<dt>Valor total</dt><dd>R$ 1.200,00</dd>");
    expect(html).toContain('<label for="email">E-mail do cliente</label>');
    expect(html).not.toContain("<script");
    expect(html).not.toContain(fixture.customer.email);
  });
  it("keeps the token out of caches, referrers and frames", async () => {
    const { headers } = await open(fixture.proposal.approval_token);
    expect(headers.get("cache-control")).toBe("no-store");
    expect(headers.get("referrer-policy")).toBe("no-referrer");
    expect(headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
  });
  it("answers 400 without a token and 404 for an unknown one", async () => {
    const missing = await open(null);
    expect(missing.status).toBe(400);
    expect(missing.html).toContain("Link incompleto");
    const unknown = await open("nao-existe");
    expect(unknown.status).toBe(404);
    expect(unknown.html).toContain("Proposta não encontrada");
  });
  it("answers 400 'Link incompleto' for a link with two tokens, whichever of them is valid", async () => {
    const proposal = await freshProposal();
    const valid = encodeURIComponent(proposal.approval_token);
    for (const query of [`token=${valid}&token=nao-existe`, `token=nao-existe&token=${valid}`, `token=${valid}&token=${valid}`]) {
      const response = await fetch(`${env.url}/functions/v1/approve-proposal?${query}`);
      const html = await response.text();
      expect({ query, status: response.status }).toEqual({ query, status: 400 });
      expect(html).toContain("Link incompleto");
      expect(html).not.toContain(`<h1>Proposta ${proposal.code}</h1>`);
    }
  });
  it("answers 410 for an expired link", async () => {
    const proposal = await freshProposal();
    const { error } = await serviceClient().from("proposals").update({ approval_token_expires_at: new Date(Date.now() - 1000).toISOString() }).eq("id", proposal.id);
    expect(error).toBeNull();
    const page = await open(proposal.approval_token);
    expect(page.status).toBe(410);
    expect(page.html).toContain("Link expirado");
    const answer = await post(proposal.approval_token, { email: fixture.customer.email, action: "approve" });
    expect(answer.status).toBe(410);
    expect((await readProposal(proposal.id)).status).toBe("pending");
  });
  it("answers 409 for a proposal cancelled before the customer answered", async () => {
    const proposal = await freshProposal();
    await setStatus(proposal.id, "cancelled");
    const page = await open(proposal.approval_token);
    expect(page.status).toBe(409);
    expect(page.html).toContain("Proposta encerrada");
  });
  it.each(["PUT", "DELETE", "PATCH"])("refuses %s with 405 and the page, in the documented shape", async (method) => {
    const response = await fetch(link(fixture.proposal.approval_token), { method });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("GET, HEAD, POST");
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(await response.text()).toContain('<html lang="pt-BR">');
  });

  it.each([["a NUL", "%00"], ["a NUL after a real token", null], ["text that is not UTF-8", "%FF%FE"]])("answers a token holding %s with the 400 incomplete-link page, not an outage", async (_what, raw) => {
    const token = raw ?? `${encodeURIComponent(fixture.proposal.approval_token)}%00`;
    const response = await fetch(`${env.url}/functions/v1/approve-proposal?token=${token}`);
    expect(response.status).toBe(raw === "%FF%FE" ? 404 : 400);
    expect(await response.text()).toContain(raw === "%FF%FE" ? "Proposta não encontrada" : "Link incompleto");
  });
});

describe("POST", () => {
  it("approves when the e-mail is the customer's (any case), once", async () => {
    const proposal = await freshProposal();
    const answer = await post(proposal.approval_token, { email: `  ${fixture.customer.email.toUpperCase()} `, action: "approve" });
    expect(answer.status).toBe(200);
    expect(answer.html).toContain("<h1>Proposta aprovada</h1>");
    const row = await readProposal(proposal.id);
    expect(row.status).toBe("approved");

    const again = await post(proposal.approval_token, { email: fixture.customer.email, action: "reject" });
    expect(again.status).toBe(409);
    expect(again.html).toContain("já foi aprovada");
    expect((await readProposal(proposal.id)).status).toBe("approved");
    const reopened = await open(proposal.approval_token);
    expect(reopened.status).toBe(409);
  });
  it("rejects when asked to", async () => {
    const proposal = await freshProposal();
    const answer = await post(proposal.approval_token, { email: fixture.customer.email, action: "reject" });
    expect(answer.status).toBe(200);
    expect(answer.html).toContain("<h1>Proposta recusada</h1>");
    expect((await readProposal(proposal.id)).status).toBe("rejected");
  });
  it("refuses a wrong e-mail with 403, shows the form again with the error, and changes nothing", async () => {
    const proposal = await freshProposal();
    const answer = await post(proposal.approval_token, { email: "outra@pessoa.test", action: "approve" });
    expect(answer.status).toBe(403);
    expect(answer.html).toContain('role="alert" id="erro"');
    expect(answer.html).toContain('value="outra@pessoa.test"');
    expect((await readProposal(proposal.id)).status).toBe("pending");
  });
  it("answers a link with two tokens with 400 and changes nothing, whichever token is the proposal's", async () => {
    const proposal = await freshProposal();
    const valid = encodeURIComponent(proposal.approval_token);
    for (const query of [`token=nao-existe&token=${valid}`, `token=${valid}&token=nao-existe`]) {
      const response = await fetch(`${env.url}/functions/v1/approve-proposal?${query}`, {
        method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ email: fixture.customer.email, action: "approve" }).toString(),
      });
      expect({ query, status: response.status }).toEqual({ query, status: 400 });
      expect(await response.text()).toContain("Link incompleto");
    }
    expect((await readProposal(proposal.id)).status).toBe("pending");
  });
  it("shows the form again with 400 for a form that gives its action twice, changing nothing", async () => {
    const proposal = await freshProposal();
    const body = `email=${encodeURIComponent(fixture.customer.email)}&action=reject&action=approve`;
    const response = await fetch(link(proposal.approval_token), { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body });
    expect(response.status).toBe(400);
    expect(await response.text()).toContain('role="alert" id="erro"');
    expect((await readProposal(proposal.id)).status).toBe("pending");
  });
  it("refuses an incomplete form or an unknown action with 400", async () => {
    const proposal = await freshProposal();
    expect((await post(proposal.approval_token, { action: "approve" })).status).toBe(400);
    expect((await post(proposal.approval_token, { email: fixture.customer.email })).status).toBe(400);
    expect((await post(proposal.approval_token, { email: fixture.customer.email, action: "accept" })).status).toBe(400);
    expect((await readProposal(proposal.id)).status).toBe("pending");
  });
  it("refuses a body that is not a form with 415", async () => {
    const proposal = await freshProposal();
    const answer = await post(proposal.approval_token, { email: fixture.customer.email, action: "approve" }, "application/json");
    expect(answer.status).toBe(415);
    expect((await readProposal(proposal.id)).status).toBe("pending");
  });
  it("shows the form again with 400 for an e-mail holding a NUL, changing nothing", async () => {
    const proposal = await freshProposal();
    const answer = await post(proposal.approval_token, { email: `${fixture.customer.email}\u0000`, action: "approve" });
    expect(answer.status).toBe(400);
    expect(answer.html).toContain('role="alert"');
    expect(answer.html).toContain("<form");
    expect((await readProposal(proposal.id)).status).toBe("pending");
  });
  it("answers 404 for an unknown token", async () => {
    expect((await post("nao-existe", { email: fixture.customer.email, action: "approve" })).status).toBe(404);
  });
  it("records the customer's answer in the audit log without a signed-in actor", async () => {
    const proposal = await freshProposal();
    await post(proposal.approval_token, { email: fixture.customer.email, action: "approve" });
    const { data } = await serviceClient().from("audit_log").select("action, actor_id").eq("entity_id", proposal.id).order("id");
    expect(data).toEqual([
      { action: "proposal.created", actor_id: fixture.technician.id },
      { action: "proposal.approved", actor_id: null },
    ]);
  });
});

describe("the same door through the data API", () => {
  it("an anonymous client can read one proposal by token with the RPC, but never list the table", async () => {
    const headers = { apikey: env.anonKey, "content-type": "application/json" };
    const rpc = await fetch(`${env.url}/rest/v1/rpc/get_proposal_for_approval`, { method: "POST", headers, body: JSON.stringify({ _token: fixture.proposal.approval_token }) });
    expect(rpc.status).toBe(200);
    const rows = (await rpc.json()) as { code: string; token_state: string }[];
    expect(rows).toEqual([expect.objectContaining({ code: fixture.proposal.code, token_state: "open" })]);
    const list = await fetch(`${env.url}/rest/v1/proposals?select=id`, { headers });
    expect(list.status).toBe(401);
  });
});

describe("the technician's notice", () => {
  it("an approval e-mails the proposal's technician, through the mail service, and the page says so", async () => {
    const { technician, customer, proposal, product } = await technicianWithProposal("Ana Aviso");
    const answer = await post(proposal.approval_token, { email: customer.email, action: "approve" });
    expect(answer.status).toBe(200);
    expect(answer.html).toContain("O técnico responsável foi avisado por e-mail");
    const caught = await caughtFor(technician.email);
    expect(caught).toHaveLength(1);
    expect(caught[0].to).toEqual([technician.email]);
    expect(caught[0].from).toBe("Orbita Propostas <propostas@orbita.local>");
    expect(caught[0].subject).toBe(`Proposta ${proposal.code} aprovada pelo cliente`);
    expect(caught[0].text).toContain(`${customer.contact_name}, de ${customer.company_name}, aprovou a proposta ${proposal.code} (${product.name}`);
    expect(caught[0].tags).toEqual([{ name: "proposal_code", value: proposal.code }, { name: "notice", value: "proposal_approved" }]);
    expect(`${caught[0].text}${caught[0].html}`).not.toContain(proposal.approval_token);
    expect(await caughtFor(customer.email)).toEqual([]);
  });
  it("a rejection does too", async () => {
    const { technician, customer, proposal } = await technicianWithProposal("Ana Aviso Recusa");
    const answer = await post(proposal.approval_token, { email: customer.email, action: "reject" });
    expect(answer.status).toBe(200);
    expect(answer.html).toContain("O técnico responsável foi avisado por e-mail");
    const caught = await caughtFor(technician.email);
    expect(caught.map((message) => message.subject)).toEqual([`Proposta ${proposal.code} recusada pelo cliente`]);
    expect(caught[0].text).toContain(`recusou a proposta ${proposal.code}`);
  });
  it("answers that change nothing send nothing", async () => {
    const { technician, customer, proposal } = await technicianWithProposal("Ana Sem Aviso");
    expect((await post(proposal.approval_token, { email: "outra@pessoa.test", action: "approve" })).status).toBe(403);
    await post(proposal.approval_token, { email: customer.email, action: "approve" });
    expect((await post(proposal.approval_token, { email: customer.email, action: "reject" })).status).toBe(409);
    expect(await caughtFor(technician.email)).toHaveLength(1);
  });
  it("when the mail service refuses the notice, the answer stands and the page does not claim it was sent", async () => {
    const { technician, customer, proposal } = await technicianWithProposal("Ana Aviso Falho");
    // An empty address: the mail service refuses it (422), as Resend would.
    expect((await serviceClient().from("profiles").update({ email: "" }).eq("user_id", technician.id)).error).toBeNull();
    const answer = await post(proposal.approval_token, { email: customer.email, action: "approve" });
    expect(answer.status).toBe(200);
    expect(answer.html).toContain("Proposta aprovada");
    expect(answer.html).not.toContain("avisado");
    expect(answer.html).toContain("Sua resposta ficou registrada para o técnico responsável");
    expect((await readProposal(proposal.id)).status).toBe("approved");
    expect(await caughtFor(technician.email)).toEqual([]);
  });
  it("a technician without an e-mail on file is not told either, and the rejection stands", async () => {
    const { technician, customer, proposal } = await technicianWithProposal("Ana Sem E-mail");
    expect((await serviceClient().from("profiles").update({ email: null }).eq("user_id", technician.id)).error).toBeNull();
    const answer = await post(proposal.approval_token, { email: customer.email, action: "reject" });
    expect(answer.status).toBe(200);
    expect(answer.html).toContain("Sua resposta ficou registrada para o técnico responsável");
    expect((await readProposal(proposal.id)).status).toBe("rejected");
  });
});
