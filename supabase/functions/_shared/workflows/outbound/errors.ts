/** The one error type of outbound calls: a stable code plus a message a workflow's author can act on. */

/** Why an outbound call did not produce a response. */
export type OutboundErrorCode =
  /** Not an absolute http(s) URL. */
  | "OUTBOUND_INVALID_URL"
  /** The host resolves to (or is) an address the service may not call, or a redirect leads to one. */
  | "OUTBOUND_BLOCKED"
  /** No answer within the time limit. */
  | "OUTBOUND_TIMEOUT"
  /** The response body is larger than allowed. */
  | "OUTBOUND_TOO_LARGE"
  /** More redirects than allowed. */
  | "OUTBOUND_TOO_MANY_REDIRECTS"
  /** The name does not resolve, the connection was refused or reset, or TLS failed. */
  | "OUTBOUND_CONNECTION"
  /** The server's answer is not valid HTTP/1.1. */
  | "OUTBOUND_PROTOCOL"
  /** The caller's signal aborted the call. */
  | "OUTBOUND_ABORTED";

/** A failed outbound call. */
export class OutboundError extends Error {
  readonly code: OutboundErrorCode;
  /** True when no byte of the request was sent (the connection never opened): safe to try another address. */
  readonly beforeSending: boolean;

  constructor(code: OutboundErrorCode, message: string, options?: { cause?: unknown; beforeSending?: boolean }) {
    super(message, options);
    this.name = "OutboundError";
    this.code = code;
    this.beforeSending = options?.beforeSending ?? false;
  }
}

/** Codes worth another attempt: the server may answer next time. */
export const TRANSIENT_OUTBOUND_CODES: ReadonlySet<OutboundErrorCode> = new Set(["OUTBOUND_TIMEOUT", "OUTBOUND_CONNECTION"]);
