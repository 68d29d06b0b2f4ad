/**
 * A JSON answer with the bare `application/json` type Resend sends (Hono's `c.json` would add a
 * charset), so the catcher's headers stay those of the service it stands in for.
 */
export function json(value: unknown, status = 200): Response {
  return new Response(JSON.stringify(value), { status, headers: { "content-type": "application/json" } });
}
