import { describe, expect, it } from "vitest";
import { fetchFrom, simulatedClientAddress } from "../helpers/clients.ts";
import { env } from "../helpers/env.ts";
import { createPortalUser, readProposal, technicianWithProposal } from "./factories.ts";

/**
 * The spec's limits as the gateway enforces them per user (JWT sub) or client address: data API
 * 200 requests per minute, authentication 60, functions 500. The request after the budget gets
 * 429 with Retry-After. Each test spends the budget of a caller of its own.
 */
async function burst(count: number, request: () => Promise<Response>, concurrency = 20): Promise<number[]> {
  const statuses: number[] = [];
  for (let start = 0; start < count; start += concurrency) {
    const batch = await Promise.all(Array.from({ length: Math.min(concurrency, count - start) }, async () => {
      const response = await request();
      await response.arrayBuffer();
      return response.status;
    }));
    statuses.push(...batch);
  }
  return statuses;
}

function expectRetryAfter(response: Response): void {
  const seconds = Number(response.headers.get("retry-after"));
  expect(Number.isInteger(seconds)).toBe(true);
  expect(seconds).toBeGreaterThanOrEqual(1);
  expect(seconds).toBeLessThanOrEqual(60);
}

describe("rate limits", () => {
  it("data API: 200 requests per minute per signed-in user, then 429", async () => {
    const user = await createPortalUser("Ana Limite", "technician");
    const read = () => fetch(`${env.url}/rest/v1/products?select=id&is_active=eq.true&limit=1`, { headers: { apikey: env.anonKey, authorization: `Bearer ${user.accessToken}` } });
    const statuses = await burst(200, read);
    expect(statuses.filter((status) => status === 200)).toHaveLength(200);
    const refused = await read();
    expect(refused.status).toBe(429);
    expectRetryAfter(refused);
    expect(((await refused.json()) as { code: string }).code).toBe("rate_limit_exceeded");
    const other = await createPortalUser("Bruno Limite", "technician");
    expect((await fetch(`${env.url}/rest/v1/products?select=id&limit=1`, { headers: { apikey: env.anonKey, authorization: `Bearer ${other.accessToken}` } })).status).toBe(200);
  }, 60_000);

  it("authentication: 60 requests per minute per client address, then 429", async () => {
    const device = fetchFrom(simulatedClientAddress());
    const signIn = () =>
      device(`${env.url}/auth/v1/token?grant_type=password`, {
        method: "POST",
        headers: { apikey: env.anonKey, "content-type": "application/json" },
        body: JSON.stringify({ email: "ninguem@portal.test", password: "errada" }),
      });
    const statuses = await burst(60, signIn, 10);
    expect(statuses.every((status) => status === 400)).toBe(true);
    const refused = await signIn();
    expect(refused.status).toBe(429);
    expectRetryAfter(refused);
    expect(((await refused.json()) as { code: string }).code).toBe("over_request_rate_limit");
  }, 60_000);

  it("functions: 500 requests per minute per client address, then 429", async () => {
    const device = fetchFrom(simulatedClientAddress());
    const call = () => device(`${env.url}/functions/v1/approve-proposal`);
    const statuses = await burst(500, call, 25);
    expect(statuses.filter((status) => status === 400)).toHaveLength(500);
    const refused = await call();
    expect(refused.status).toBe(429);
    expectRetryAfter(refused);
    const elsewhere = await fetchFrom(simulatedClientAddress())(`${env.url}/functions/v1/approve-proposal`);
    expect(elsewhere.status).toBe(400);
  }, 120_000);

  it("the approval page: a visitor who spent their data-API budget gets the 429 page with Retry-After, and nothing changes", async () => {
    const { customer, proposal } = await technicianWithProposal("Ana Limite da Página");
    const page = `${env.url}/functions/v1/approve-proposal?token=${encodeURIComponent(proposal.approval_token)}`;
    const visitor = fetchFrom(simulatedClientAddress());
    // The page reads the proposal through the data API on the visitor's behalf (their address in
    // X-Forwarded-For), so the visitor's own direct calls and the page's share one budget.
    const lookup = () =>
      visitor(`${env.url}/rest/v1/rpc/get_proposal_for_approval`, {
        method: "POST",
        headers: { apikey: env.anonKey, "content-type": "application/json" },
        body: JSON.stringify({ _token: proposal.approval_token }),
      });
    expect((await burst(200, lookup)).filter((status) => status === 200)).toHaveLength(200);

    const refused = await visitor(page);
    expect(refused.status).toBe(429);
    expectRetryAfter(refused);
    expect(refused.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(refused.headers.get("cache-control")).toBe("no-store");
    const html = await refused.text();
    expect(html).toContain('<html lang="pt-BR">');
    expect(html).toContain("<h1>Muitas tentativas</h1>");

    const answer = await visitor(page, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ email: customer.email, action: "approve" }).toString() });
    expect(answer.status).toBe(429);
    expectRetryAfter(answer);
    expect(await answer.text()).toContain("Muitas tentativas");
    expect((await readProposal(proposal.id)).status).toBe("pending");

    const otherVisitor = await fetchFrom(simulatedClientAddress())(page);
    expect(otherVisitor.status).toBe(200);
    expect(await otherVisitor.text()).toContain(`<h1>Proposta ${proposal.code}</h1>`);
  }, 60_000);
});
