import type { StackConfig } from "../config/stack-config.ts";
import { DashboardError, errorInWords } from "./errors.ts";

/** A request to the stack's gateway. */
export interface StackRequest {
  method?: string;
  headers?: Record<string, string>;
  /** Sent as JSON. */
  json?: unknown;
  /** Sent as is (a file upload). */
  body?: BodyInit;
}

/**
 * The dashboard's only way to the stack: the gateway's public routes (/pg/, /rest/v1, /auth/v1,
 * /storage/v1, /functions/v1, /api) with the service_role key, the calls Studio makes.
 */
export class StackClient {
  constructor(private readonly config: StackConfig) {}

  /** The raw answer of the gateway. */
  async fetch(path: string, request: StackRequest = {}): Promise<Response> {
    const headers: Record<string, string> = {
      apikey: this.config.serviceRoleKey,
      authorization: `Bearer ${this.config.serviceRoleKey}`,
      ...request.headers,
    };
    let body = request.body;
    if (request.json !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(request.json);
    }
    return await fetch(`${this.config.apiUrl}${path}`, { method: request.method ?? "GET", headers, body });
  }

  /** The parsed JSON answer; a failed call throws a DashboardError saying in words what went wrong. */
  async json<T>(path: string, request: StackRequest = {}): Promise<T> {
    const response = await this.fetch(path, request);
    const text = await response.text();
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = text;
    }
    if (!response.ok) throw new DashboardError(response.status, errorInWords(parsed, response.status));
    return parsed as T;
  }
}
