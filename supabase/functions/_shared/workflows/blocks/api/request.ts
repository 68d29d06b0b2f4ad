/**
 * Turns an API block's resolved config into the request it sends: path parameters filled into the
 * URL (`/users/{id}`), query parameters appended, headers as text, and the body as JSON (or as
 * text or a form when the Content-Type says so). Also names the credentials in it, for masking.
 */
import { WorkflowError } from "../../core/errors.ts";
import { preview } from "../../core/values.ts";
import type { ApiInput } from "./config.ts";

/** A request ready for the guarded fetch. */
export interface ApiRequest {
  url: string;
  method: string;
  headers: Headers;
  body: string | null;
}

const METHODS_WITH_BODY = new Set(["POST", "PUT", "PATCH"]);

/** Header and query names whose values are credentials. */
const CREDENTIAL_NAME = /^(authorization|proxy-authorization|cookie)$|token|secret|passw|api[-_]?key|apikey|auth|signature|credential|session/i;

function fail(message: string): never {
  throw new WorkflowError("BLOCK_FAILED", message);
}

/** A parameter's value as text: strings as they are, numbers and booleans spelled out, the rest as JSON. */
function text(value: unknown): string {
  return typeof value === "string" ? value : typeof value === "number" || typeof value === "boolean" || typeof value === "bigint" ? String(value) : JSON.stringify(value);
}

function fillPath(template: string, params: Record<string, unknown> | undefined): string {
  return template.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => {
    const value = params?.[name];
    if (value === undefined || value === null) fail(`path parameter {${name}} has no value in pathParams`);
    return encodeURIComponent(text(value));
  });
}

/** Builds the request; a value that cannot be sent fails the block with a message naming it. */
export function buildApiRequest(input: ApiInput): ApiRequest {
  if (typeof input.url !== "string" || input.url.trim() === "") fail(`url must be text (got ${preview(input.url)})`);
  const method = input.method ?? "GET";
  let url: URL;
  try {
    url = new URL(fillPath(input.url.trim(), input.pathParams));
  } catch (error) {
    if (error instanceof WorkflowError) throw error;
    fail(`url ${preview(input.url)} is not an absolute URL`);
  }
  for (const [name, value] of Object.entries(input.query ?? {})) {
    if (value === undefined || value === null) continue;
    for (const item of Array.isArray(value) ? value : [value]) url.searchParams.append(name, text(item));
  }
  const headers = new Headers();
  for (const [name, value] of Object.entries(input.headers ?? {})) {
    if (value === undefined || value === null) continue;
    try {
      headers.set(name, text(value));
    } catch {
      fail(`header ${preview(name)} cannot be sent (a header name is a token, its value a line of text)`);
    }
  }
  let body: string | null = null;
  if (input.body !== undefined && input.body !== null) {
    if (!METHODS_WITH_BODY.has(method)) fail(`a ${method} request carries no body; use POST, PUT or PATCH, or remove body`);
    const type = headers.get("content-type");
    if (type === null) headers.set("content-type", "application/json");
    if (type !== null && /^application\/x-www-form-urlencoded/i.test(type) && typeof input.body === "object") {
      body = new URLSearchParams(Object.entries(input.body as Record<string, unknown>).map(([name, value]) => [name, text(value)])).toString();
    } else if (typeof input.body === "string" && type !== null && !/json/i.test(type)) body = input.body;
    else body = JSON.stringify(input.body);
  }
  return { url: url.href, method, headers, body };
}

/** Credentials in the config: values of credential-named headers and query parameters (and the token after `Bearer`). */
export function apiSecrets(input: ApiInput): string[] {
  const secrets: string[] = [];
  for (const group of [input.headers, input.query]) {
    for (const [name, value] of Object.entries(group ?? {})) {
      if (value === undefined || value === null || !CREDENTIAL_NAME.test(name)) continue;
      for (const item of Array.isArray(value) ? value : [value]) {
        const whole = text(item);
        secrets.push(whole);
        const scheme = /^(bearer|basic|token|bot|digest)\s+(\S+)$/i.exec(whole);
        if (scheme) secrets.push(scheme[2]);
      }
    }
  }
  return secrets;
}
