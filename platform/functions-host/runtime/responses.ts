/**
 * The answers the local Supabase edge runtime gives when the platform, not the function, responds
 * (codes and statuses from docs/reference: verify_jwt failures, unknown function, worker faults).
 */

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });
}

export const missingAuthorization = () => json(401, { msg: "Error: Missing authorization header" });
export const notBearer = () => json(401, { msg: "Error: Auth header is not 'Bearer {token}'" });
export const invalidJwt = () => json(401, { msg: "Invalid JWT" });

export const functionNotFound = () => new Response("Function not found", { status: 404, headers: { "content-type": "text/plain;charset=UTF-8" } });

/** The module threw while loading, or registered no handler. */
export const bootError = () => json(503, { code: "BOOT_ERROR", message: "Worker failed to boot (please check logs)" });

/** The handler threw (or the worker died) while answering. */
export const workerErrorResponse = () => json(500, { code: "WORKER_ERROR", message: "Function exited due to an error (please check logs)" });

/** The request ran past the wall-clock limit; the worker is replaced. */
export const wallClockExceeded = (limitMs: number) =>
  json(546, { code: "WORKER_LIMIT", message: `Function exceeded the wall-clock limit of ${limitMs / 1000} s and was stopped (please check logs)` });
