/**
 * Calls the gamification API over HTTP the way a client app does: through the gateway, at
 * /functions/v1/api/v1/gamification/... or (local gateway) at the root /api/v1/gamification/...
 */
import { fetchFrom, simulatedClientAddress } from "../helpers/clients.ts";
import { env } from "../helpers/env.ts";

/** The envelope every gamification response uses. */
export interface Envelope {
  success: boolean;
  data?: Record<string, unknown>;
  error?: { codigo: string; mensagem: string; detalhes?: unknown };
  timestamp: string;
}

/** An API answer: status, parsed body and headers. */
export interface ApiAnswer {
  status: number;
  body: Envelope;
  headers: Headers;
}

/** How to call: whose token, which query, which body, and through which base path. */
export interface CallOptions {
  token?: string;
  query?: Record<string, string | number>;
  body?: unknown;
  /** Raw body text and content type, to send something that is not JSON. */
  raw?: { text: string; contentType: string };
  via?: "functions" | "root";
}

/** Sends one request to `/api/v1/gamification${path}` and reads the JSON answer. */
export async function callApi(method: string, path: string, options: CallOptions = {}): Promise<ApiAnswer> {
  const base = options.via === "root" ? env.url : `${env.url}/functions/v1`;
  const url = new URL(`${base}/api/v1/gamification${path}`);
  for (const [name, value] of Object.entries(options.query ?? {})) url.searchParams.set(name, String(value));
  const headers: Record<string, string> = {};
  if (options.token) headers.Authorization = `Bearer ${options.token}`;
  let body: string | undefined;
  if (options.raw) {
    body = options.raw.text;
    headers["Content-Type"] = options.raw.contentType;
  } else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["Content-Type"] = "application/json";
  }
  // Each call comes from a client address of its own, as many devices would.
  const response = await fetchFrom(simulatedClientAddress())(url, { method, headers, body });
  return { status: response.status, body: (await response.json()) as Envelope, headers: response.headers };
}
