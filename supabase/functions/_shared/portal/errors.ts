/**
 * How the portal's JSON functions word the toolkit's problems and render errors: the documented
 * `{ "error": { "code", "message", "details"? } }` with a snake_case code, and the CORS headers
 * browser callers need. Handlers throw the toolkit's HttpError for their own failures.
 */
import { HttpError, type Problem, type ServiceErrors } from "../http/errors.ts";

/**
 * CORS for browser callers of the JSON functions (supabase-js `functions.invoke` sends these
 * headers). The local gateway answers preflights itself; hosted Supabase passes them through.
 */
export const CORS_HEADERS: Record<string, string> = {
  "access-control-allow-origin": "*",
  "access-control-allow-headers": "authorization, x-client-info, apikey, content-type",
  "access-control-allow-methods": "GET, POST, OPTIONS",
};

/** A JSON answer with the CORS headers. */
export function jsonResponse(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return Response.json(body, { status, headers: { ...CORS_HEADERS, ...headers } });
}

/** The JSON body of every error answer: `{ error: { code, message, details? } }`. */
export interface ErrorBody {
  error: { code: string; message: string; details?: unknown };
}

/** The body an HttpError is answered with. */
export function errorBody(error: HttpError): ErrorBody {
  return { error: { code: error.code, message: error.message, ...(error.details === undefined ? {} : { details: error.details }) } };
}

const SIGN_IN = "Sign in first: this function needs a user's access token";
const UNSTORABLE = "contains a NUL character or text that is not valid UTF-8";

function describe(problem: Problem): HttpError {
  const input = (part: string) => (part === "body" ? { code: "invalid_body", message: "The request body is not valid" } : { code: `invalid_${part}`, message: `The request ${part} is not valid` });
  switch (problem.kind) {
    case "not_found":
      return new HttpError(404, "not_found", `No route for ${problem.method} ${problem.path}`);
    case "method_not_allowed":
      return new HttpError(405, "method_not_allowed", `Use ${problem.allowed.join(" or ")}`);
    case "unsupported_media_type":
      return new HttpError(415, "unsupported_media_type", `Send the body as ${problem.expected}`);
    case "body_too_large":
      return new HttpError(413, "body_too_large", `The request body is larger than ${problem.limit} bytes`);
    case "malformed_json":
      return new HttpError(400, "invalid_json", "The request body must be a JSON object");
    case "nested_too_deep":
      return new HttpError(400, "invalid_body", "The request body is not valid", [
        { path: "", message: `nests arrays and objects more than ${problem.limit} levels deep` },
      ]);
    case "unstorable_text": {
      const { code, message } = input(problem.part);
      return new HttpError(400, code, message, [{ path: problem.field, message: UNSTORABLE }]);
    }
    case "invalid_input": {
      const { code, message } = input(problem.part);
      return new HttpError(400, code, message, problem.issues.map((issue) => ({ path: issue.path.join("."), message: issue.message })));
    }
    case "missing_credentials":
    case "invalid_token":
    case "expired_token":
      return new HttpError(401, "unauthorized", SIGN_IN);
    case "internal":
      return new HttpError(500, "internal_error", "Something went wrong on our side");
  }
}

/** The portal JSON functions' errors. */
export const portalErrors: ServiceErrors = {
  describe,
  render: (error) => jsonResponse(errorBody(error), error.status, error.headers),
};
