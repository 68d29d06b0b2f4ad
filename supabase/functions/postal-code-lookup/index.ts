// postal-code-lookup: validates a CEP and returns its address from the configured ViaCEP-compatible
// service (POSTAL_LOOKUP_URL, default https://viacep.com.br). Signed-in users only, so the function
// is not an open proxy. GET ?cep=01001-000 or POST {"cep": "01001-000"}.
import { readEnv } from "../_shared/env.ts";
import { requireCaller } from "../_shared/portal/caller.ts";
import { PortalError } from "../_shared/portal/errors.ts";
import { jsonHandler, jsonResponse, readJsonBody, requireMethod } from "../_shared/portal/http.ts";
import { isValidCep, lookupPostalCode, normalizeCep } from "../_shared/portal/postal-code.ts";
import { postalCodeInputSchema } from "../_shared/portal/schemas.ts";

async function requestedCep(request: Request): Promise<string> {
  if (request.method === "POST") return (await readJsonBody(request, postalCodeInputSchema)).cep;
  const parsed = postalCodeInputSchema.safeParse({ cep: new URL(request.url).searchParams.get("cep") ?? undefined });
  if (!parsed.success) throw new PortalError(400, "invalid_postal_code", "Pass the CEP as ?cep=01001-000");
  return parsed.data.cep;
}

Deno.serve(jsonHandler("postal-code-lookup", async (request) => {
  requireMethod(request, "GET", "POST");
  requireCaller(request);
  const input = await requestedCep(request);
  const cep = normalizeCep(input);
  if (!isValidCep(cep)) {
    throw new PortalError(400, "invalid_postal_code", `"${input}" is not a CEP: use 8 digits, e.g. 01001-000`);
  }
  const result = await lookupPostalCode(cep, { baseUrl: readEnv("POSTAL_LOOKUP_URL") || "https://viacep.com.br" });
  if (!result.found) throw new PortalError(404, "postal_code_not_found", `CEP ${cep} does not exist`);
  return jsonResponse(result.address);
}));
