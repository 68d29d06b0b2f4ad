/**
 * The workflow service's wording and envelope for the toolkit's errors: `{error, code}` with the
 * service's upper-case codes (docs/workflows.md), details such as `issues` beside them, and the
 * service's one logger. Every workflow surface answers with it (the `api` function's workflow
 * routes, the async worker, the sandbox function, the webhook worker), so it sits at the top of
 * workflows/ rather than in http/, which stays neutral between services.
 */
import { HttpError, type InputPart, type Problem, type ServiceErrors } from "../http/errors.ts";
import { createLogger } from "../http/logger.ts";

/** The workflow service's one logger. */
export const workflowLog = createLogger("workflows");

/** INVALID_BODY, INVALID_QUERY, INVALID_PATH or INVALID_HEADER: the code names the part at fault. */
function invalid(part: InputPart): string {
  return `INVALID_${part.toUpperCase()}`;
}

function describe(problem: Problem): HttpError {
  switch (problem.kind) {
    case "not_found":
      return new HttpError(404, "NOT_FOUND", `No route for ${problem.method} ${problem.path}`);
    case "method_not_allowed":
      return new HttpError(405, "METHOD_NOT_ALLOWED", `Use ${problem.allowed.join(" or ")}`);
    case "unsupported_media_type":
      return new HttpError(415, "UNSUPPORTED_MEDIA_TYPE", `Send the body as ${problem.expected}`);
    case "body_too_large":
      return new HttpError(413, "BODY_TOO_LARGE", `The body is larger than ${problem.limit} bytes`);
    case "malformed_json":
      return new HttpError(400, "INVALID_BODY", "The body is not valid JSON");
    case "nested_too_deep":
      return new HttpError(400, "INVALID_BODY", `The body nests arrays and objects more than ${problem.limit} levels deep`, { maxDepth: problem.limit });
    case "unstorable_text":
      return new HttpError(400, invalid(problem.part), `${problem.field} holds a NUL character or text that is not valid UTF-8`, { field: problem.field });
    case "invalid_input": {
      const issues = problem.issues.map((issue) => ({ path: issue.path.map(String).join("."), message: issue.message }));
      const first = issues[0];
      const summary = first === undefined ? "" : `: ${first.path === "" ? "" : `${first.path} `}${first.message}`;
      return new HttpError(400, invalid(problem.part), `The request ${problem.part} is not valid${summary}`, { issues });
    }
    case "missing_credentials":
      return new HttpError(401, "UNAUTHORIZED", "Send Authorization: Bearer <access token>");
    case "expired_token":
    case "invalid_token":
      return new HttpError(401, "UNAUTHORIZED", problem.reason);
    case "internal":
      return new HttpError(500, "INTERNAL", "Something went wrong on our side");
  }
}

/** `{error, code, ...details}` with the error's status and headers. */
function render(error: HttpError): Response {
  const details = typeof error.details === "object" && error.details !== null && !Array.isArray(error.details) ? error.details : error.details === undefined ? {} : { details: error.details };
  return Response.json({ error: error.message, code: error.code, ...details }, { status: error.status, headers: error.headers });
}

/** The workflow service's errors. */
export const workflowErrors: ServiceErrors = { describe, render };
