/**
 * A failure a portal function answers deliberately: an HTTP status, a stable snake_case code for
 * programs, and a message for people. Anything else that escapes a handler is a bug and becomes 500.
 */
export class PortalError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = "PortalError";
  }
}

/** 405 for a method a function does not serve; the answer lists the ones it does in Allow. */
export class MethodNotAllowedError extends PortalError {
  constructor(readonly allow: string[]) {
    super(405, "method_not_allowed", `Use ${allow.join(" or ")}`);
    this.name = "MethodNotAllowedError";
  }
}

/** The JSON body of every error answer: `{ error: { code, message, details? } }`. */
export interface ErrorBody {
  error: { code: string; message: string; details?: unknown };
}

/** The body a PortalError is answered with. */
export function errorBody(error: PortalError): ErrorBody {
  return { error: { code: error.code, message: error.message, ...(error.details === undefined ? {} : { details: error.details }) } };
}
