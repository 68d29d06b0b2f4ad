import type { z } from "zod";

/** An error answered in Resend's shape `{statusCode, name, message}`, so the `resend` client reports it. */
export class ResendHttpError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export function resendError(error: ResendHttpError): Response {
  return new Response(JSON.stringify({ statusCode: error.statusCode, name: error.code, message: error.message }), {
    status: error.statusCode,
    headers: { "content-type": "application/json" },
  });
}

/** Resend answers 422 for bodies it cannot accept; the first issue names the field. */
export function zodToResendError(error: z.ZodError, input: unknown): ResendHttpError {
  const issue = error.issues[0];
  const field = issue?.path.join(".") ?? "";
  if (field && valueAt(input, issue.path) === undefined) {
    return new ResendHttpError(422, "missing_required_field", `Missing \`${field}\` field.`);
  }
  const message = field ? `Invalid \`${field}\`: ${issue?.message}` : (issue?.message ?? "Invalid request.");
  return new ResendHttpError(422, "validation_error", message);
}

function valueAt(input: unknown, path: PropertyKey[]): unknown {
  let value = input;
  for (const key of path) {
    if (value === null || typeof value !== "object") return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}
