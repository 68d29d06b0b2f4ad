// postal-code-lookup: validates a CEP and returns its address from the configured ViaCEP-compatible
// service (POSTAL_LOOKUP_URL, default https://viacep.com.br). Signed-in users only, so the function
// is not an open proxy. GET ?cep=01001-000 or POST {"cep": "01001-000"}.
import { readEnv } from "../_shared/config/env.ts";
import { readQuery, validate } from "../_shared/http/body.ts";
import { HttpError, type Problem } from "../_shared/http/errors.ts";
import { requireCaller } from "../_shared/portal/caller.ts";
import { jsonResponse, portalErrors } from "../_shared/portal/errors.ts";
import { readJsonBody, servePortalFunction } from "../_shared/portal/http.ts";
import { isValidCep, lookupPostalCode, normalizeCep } from "../_shared/portal/postal-code.ts";
import { postalCodeInputSchema } from "../_shared/portal/schemas.ts";

/** Any problem with the query string is this function's documented 400. */
const queryErrors = {
  describe: (problem: Problem) =>
    problem.kind === "unstorable_text" || problem.kind === "invalid_input"
      ? new HttpError(400, "invalid_postal_code", "Pass the CEP as ?cep=01001-000")
      : portalErrors.describe(problem),
};

async function requestedCep(request: Request): Promise<string> {
  if (request.method === "POST") return (await readJsonBody(request, postalCodeInputSchema)).cep;
  return validate(postalCodeInputSchema, readQuery(request, queryErrors), "query", queryErrors).cep;
}

Deno.serve(servePortalFunction("postal-code-lookup", ["GET", "POST"], async (request) => {
  await requireCaller(request);
  const input = await requestedCep(request);
  const cep = normalizeCep(input);
  if (!isValidCep(cep)) {
    throw new HttpError(400, "invalid_postal_code", `"${input}" is not a CEP: use 8 digits, e.g. 01001-000`);
  }
  const result = await lookupPostalCode(cep, { baseUrl: readEnv("POSTAL_LOOKUP_URL") || "https://viacep.com.br" });
  if (!result.found) throw new HttpError(404, "postal_code_not_found", `CEP ${cep} does not exist`);
  return jsonResponse(result.address);
}));
