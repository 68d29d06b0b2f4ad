import type { SupabaseClient } from "@supabase/supabase-js";
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomInt, randomUUID } from "node:crypto";
import { createTestUser, fetchFrom, serviceClient, type TestUser } from "../helpers/clients.ts";
import { env } from "../helpers/env.ts";

/** Factories for the portal's end-to-end suites, so each test states only what matters. */

/** The portal's application roles (enum public.app_role). */
export type AppRole = "super_admin" | "admin" | "technician";

/** A confirmed, signed-in user holding the given roles (granted with the service role). */
export async function createPortalUser(name: string, ...roles: AppRole[]): Promise<TestUser> {
  const user = await createTestUser({ full_name: name });
  if (roles.length > 0) {
    const { error } = await serviceClient().from("user_roles").insert(roles.map((role) => ({ user_id: user.id, role })));
    if (error) throw new Error(`granting ${roles.join(", ")}: ${error.message}`);
  }
  return user;
}

function checkDigit(prefix: string): number {
  let total = 0;
  for (let index = 0; index < prefix.length; index += 1) {
    total += (prefix.charCodeAt(index) - 48) * (2 + ((prefix.length - 1 - index) % 8));
  }
  return total % 11 < 2 ? 0 : 11 - (total % 11);
}

/** A fresh valid CNPJ (normalised): random 12-character base, alphanumeric when asked, with its check digits. */
export function validCnpj(alphanumeric = false): string {
  const alphabet = alphanumeric ? "0123456789ABCDEFGHJKLMNPRSTUVWXYZ" : "0123456789";
  let base = "";
  for (let index = 0; index < 12; index += 1) base += alphabet[randomInt(alphabet.length)];
  const first = checkDigit(base);
  return `${base}${first}${checkDigit(`${base}${first}`)}`;
}

/** "11222333000181" → "11.222.333/0001-81", the way people type it. */
export function maskCnpj(cnpj: string): string {
  return `${cnpj.slice(0, 2)}.${cnpj.slice(2, 5)}.${cnpj.slice(5, 8)}/${cnpj.slice(8, 12)}-${cnpj.slice(12)}`;
}

/** The product columns the suites use. */
export interface ProductRow {
  id: string;
  name: string;
  monthly_price: number;
  commission_percentage: number;
  is_active: boolean;
}

/** A product created with the service role (active, 10 % commission unless told otherwise). */
export async function createProduct(overrides: Partial<Omit<ProductRow, "id">> = {}): Promise<ProductRow> {
  const { data, error } = await serviceClient()
    .from("products")
    .insert({ name: `Produto ${randomUUID().slice(0, 8)}`, description: "Produto de teste", monthly_price: 100, product_type: "test", commission_percentage: 0.1, ...overrides })
    .select("id, name, monthly_price, commission_percentage, is_active")
    .single();
  if (error) throw new Error(`creating a product: ${error.message}`);
  return data as ProductRow;
}

/** The customer columns the suites use. */
export interface CustomerRow {
  id: string;
  company_name: string;
  contact_name: string;
  email: string;
  cnpj: string;
}

/** A customer inserted by the technician themselves (so RLS and the triggers apply). */
export async function createCustomer(technician: TestUser, overrides: Record<string, unknown> = {}): Promise<CustomerRow> {
  const suffix = randomUUID().slice(0, 8);
  const { data, error } = await technician.client
    .from("customers")
    .insert({ company_name: `Empresa ${suffix} Ltda`, contact_name: `Contato ${suffix}`, email: `compras-${suffix}@cliente.test`, phone: "(11) 98765-4321", cnpj: validCnpj(), ...overrides })
    .select("id, company_name, contact_name, email, cnpj")
    .single();
  if (error) throw new Error(`creating a customer: ${error.message}`);
  return data as CustomerRow;
}

/** The proposal columns the suites use, as stored. */
export interface StoredProposal {
  id: string;
  code: string;
  status: string;
  total_value: number;
  technician_id: string;
}

/** A proposal with the approval token issued for it (the token is never stored, only its digest). */
export interface ProposalRow extends StoredProposal {
  approval_token: string;
}

const PROPOSAL_COLUMNS = "id, code, status, total_value, technician_id";

/**
 * Issues a new approval token for a pending proposal, as send-proposal-email does right before it
 * sends (service role; any earlier token stops working).
 */
export async function issueApprovalToken(proposalId: string): Promise<string> {
  const { data, error } = await serviceClient().rpc("issue_approval_token", { _proposal_id: proposalId });
  if (error) throw new Error(`issuing an approval token: ${error.message}`);
  return data as string;
}

/**
 * A pending proposal created by the technician (monthly 100 × 12 unless told otherwise), with an
 * approval token issued for it the way send-proposal-email issues one, so suites can open its link
 * without going through the mail catcher.
 */
export async function createProposal(technician: TestUser, customerId: string, productId: string, values: { monthly_value?: number; contract_months?: number } = {}): Promise<ProposalRow> {
  const { data, error } = await technician.client
    .from("proposals")
    .insert({ customer_id: customerId, product_id: productId, monthly_value: 100, contract_months: 12, ...values })
    .select("id")
    .single();
  if (error) throw new Error(`creating a proposal: ${error.message}`);
  const id = (data as { id: string }).id;
  return { ...(await readProposal(id)), approval_token: await issueApprovalToken(id) };
}

/** A technician with a customer, a product and a pending proposal. */
export async function technicianWithProposal(name = "Técnica Teste") {
  const technician = await createPortalUser(name, "technician");
  const product = await createProduct();
  const customer = await createCustomer(technician);
  const proposal = await createProposal(technician, customer.id, product.id);
  return { technician, product, customer, proposal };
}

/** Moves a proposal's status from the server side (service role), as the approval flow would. */
export async function setStatus(proposalId: string, status: "approved" | "rejected" | "active" | "cancelled"): Promise<void> {
  const { error } = await serviceClient().from("proposals").update({ status }).eq("id", proposalId);
  if (error) throw new Error(`setting status ${status}: ${error.message}`);
}

/** Reads a proposal's current row with the service role. */
export async function readProposal(proposalId: string): Promise<StoredProposal> {
  const { data, error } = await serviceClient().from("proposals").select(PROPOSAL_COLUMNS).eq("id", proposalId).single();
  if (error) throw new Error(`reading proposal: ${error.message}`);
  return data as StoredProposal;
}

/** Calls an edge function with fetch, as a client would (optional bearer token, JSON body and client address). */
export async function callFunction(name: string, options: { token?: string; body?: unknown; method?: string; address?: string } = {}): Promise<Response> {
  const headers: Record<string, string> = { apikey: env.anonKey };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers["content-type"] = "application/json";
  return await (options.address ? fetchFrom(options.address) : fetch)(`${env.url}/functions/v1/${name}`, {
    method: options.method ?? "POST",
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
}

/** A message the mail catcher caught, as its API shows it. */
export interface CaughtMessage {
  id: string;
  from: string;
  to: string[];
  subject: string;
  html: string | null;
  text: string | null;
  tags: { name: string; value: string }[];
  attachments: { index: number; filename: string; content_type: string; size: number }[];
}

/** Every message the mail catcher caught for a recipient. */
export async function caughtFor(recipient: string): Promise<CaughtMessage[]> {
  const list = (await (await fetch(`${env.mailUrl}/api/messages?to=${encodeURIComponent(recipient)}`)).json()) as { id: string }[];
  return await Promise.all(list.map(async ({ id }) => (await (await fetch(`${env.mailUrl}/api/messages/${id}`)).json()) as CaughtMessage));
}

/** The text of a PDF as poppler's pdftotext reads it, whitespace collapsed. */
export function pdfText(bytes: Uint8Array): string {
  const file = join(mkdtempSync(join(tmpdir(), "portal-pdf-")), "document.pdf");
  writeFileSync(file, bytes);
  return execFileSync("pdftotext", ["-layout", file, "-"], { encoding: "utf8" }).replace(/\s+/g, " ");
}

/** The URLs a PDF's objects hold (link annotations), as poppler's `pdfinfo -url` lists them. */
export function pdfUrls(bytes: Uint8Array): string[] {
  const file = join(mkdtempSync(join(tmpdir(), "portal-pdf-")), "document.pdf");
  writeFileSync(file, bytes);
  // Output: a header line, then "<page> <type> <url>" per URL.
  return execFileSync("pdfinfo", ["-url", file], { encoding: "utf8" }).split("\n").slice(1).filter(Boolean).map((line) => line.trim().split(/\s+/).slice(2).join(" "));
}

/** pdfinfo's "Page size" line of a PDF. */
export function pdfPageSize(bytes: Uint8Array): string {
  const file = join(mkdtempSync(join(tmpdir(), "portal-pdf-")), "document.pdf");
  writeFileSync(file, bytes);
  return /Page size:\s+(.*)/.exec(execFileSync("pdfinfo", [file], { encoding: "utf8" }))?.[1] ?? "";
}

/** Counts rows a filter matches, with the service role (for "changed nothing" checks). */
export async function countRows(client: SupabaseClient, table: string, column: string, value: string): Promise<number> {
  const { count, error } = await client.from(table).select("*", { count: "exact", head: true }).eq(column, value);
  if (error) throw new Error(`counting ${table}: ${error.message}`);
  return count ?? 0;
}
