/**
 * The auth service's logger: one JSON line per event on stderr, which the platform supervisor
 * writes to logs/platform.log. Only failures the client cannot see the cause of are logged.
 */
export function logAuthError(message: string, fields: Record<string, unknown>): void {
  const { error } = fields;
  const detail: Record<string, unknown> = error instanceof Error ? { error: error.message, stack: error.stack } : {};
  const internal = fields.internal;
  if (internal !== undefined) detail.internal = internal instanceof Error ? internal.message : String(internal);
  process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level: "error", service: "auth", message, ...fields, ...detail })}\n`);
}
