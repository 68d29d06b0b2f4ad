import { z } from "zod";
import { HttpError } from "../http/errors.ts";

/** An address as the portal stores it (customers.postal_code, street, city, state). */
export interface PostalAddress {
  postalCode: string;
  formatted: string;
  street: string;
  complement: string;
  district: string;
  city: string;
  state: string;
  ibgeCode: string | null;
}

/** What a lookup found: an address, or the service's answer that the CEP does not exist. */
export type PostalLookupResult = { found: true; address: PostalAddress } | { found: false };

/** A CEP reduced to digits, as stored: "01001-000" → "01001000". Same rule as the database's. */
export function normalizeCep(input: string): string {
  return input.replace(/[.\s-]/g, "");
}

/** Whether a normalised CEP has the 8-digit format (00000000 is never assigned). */
export function isValidCep(cep: string): boolean {
  return /^\d{8}$/.test(cep) && cep !== "00000000";
}

/** "01001000" → "01001-000". */
export function formatCep(cep: string): string {
  return `${cep.slice(0, 5)}-${cep.slice(5)}`;
}

const text = z.string().default("");
const viaCepAddressSchema = z.object({
  cep: z.string(),
  logradouro: text,
  complemento: text,
  bairro: text,
  localidade: text,
  uf: text,
  ibge: z.string().optional(),
});

/**
 * Reads a ViaCEP answer body. ViaCEP says "unknown CEP" with an `erro` key whose value has been
 * both true and "true" over the years, so only the key's presence is tested.
 */
export function parseViaCepBody(cep: string, body: unknown): PostalLookupResult {
  if (body !== null && typeof body === "object" && "erro" in body) return { found: false };
  const parsed = viaCepAddressSchema.safeParse(body);
  if (!parsed.success) throw new HttpError(502, "postal_lookup_unavailable", "The postal-code service answered something unexpected");
  const address = parsed.data;
  return {
    found: true,
    address: {
      postalCode: cep,
      formatted: formatCep(cep),
      street: address.logradouro,
      complement: address.complemento,
      district: address.bairro,
      city: address.localidade,
      state: address.uf,
      ibgeCode: address.ibge || null,
    },
  };
}

/** Where and how to ask; fetch is injectable so unit tests never touch the network. */
export interface PostalLookupOptions {
  baseUrl: string;
  timeoutMs?: number;
  fetchImpl?: typeof fetch;
}

/**
 * Looks a valid CEP up with `GET <baseUrl>/ws/<cep>/json/` (ViaCEP's wire format). An unreachable
 * service, a 5xx or an unreadable answer is 502 postal_lookup_unavailable; no answer in time is
 * 504 postal_lookup_timeout; the service refusing the format is 400 invalid_postal_code.
 */
export async function lookupPostalCode(cep: string, options: PostalLookupOptions): Promise<PostalLookupResult> {
  const url = `${options.baseUrl.replace(/\/+$/, "")}/ws/${cep}/json/`;
  let response: Response;
  try {
    response = await (options.fetchImpl ?? fetch)(url, { headers: { accept: "application/json" }, signal: AbortSignal.timeout(options.timeoutMs ?? 5000) });
  } catch (error) {
    if (error instanceof DOMException && error.name === "TimeoutError") {
      throw new HttpError(504, "postal_lookup_timeout", "The postal-code service did not answer in time");
    }
    throw new HttpError(502, "postal_lookup_unavailable", "The postal-code service is unreachable");
  }
  if (response.status === 400) throw new HttpError(400, "invalid_postal_code", `The postal-code service rejected CEP ${cep}`);
  if (!response.ok) throw new HttpError(502, "postal_lookup_unavailable", `The postal-code service answered HTTP ${response.status}`);
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    throw new HttpError(502, "postal_lookup_unavailable", "The postal-code service answered something that is not JSON");
  }
  return parseViaCepBody(cep, body);
}
