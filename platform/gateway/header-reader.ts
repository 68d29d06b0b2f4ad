import type { IncomingHttpHeaders } from "node:http";

/** What the gateway's checks read from a request's headers: web `Headers` fit it as they are. */
export interface HeaderReader {
  get(name: string): string | null;
}

/** A node request's headers as a HeaderReader (repeated headers joined as HTTP allows). */
export function incomingHeaderReader(headers: IncomingHttpHeaders): HeaderReader {
  return {
    get(name) {
      const value = headers[name];
      if (value === undefined) return null;
      return Array.isArray(value) ? value.join(", ") : value;
    },
  };
}
