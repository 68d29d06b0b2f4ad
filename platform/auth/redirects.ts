import { isIP } from "node:net";
import type { AuthSettings } from "./settings.ts";

const DECIMAL_IP = /^[0-9]+$/;
const REGULAR_HOSTNAME = /^[a-zA-Z0-9]([a-zA-Z0-9.-]*[a-zA-Z0-9])?$/;

function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/-]/g, "\\$&");
}

/**
 * An `additional_redirect_urls` entry as GoTrue matches it (gobwas/glob with "." and "/" as
 * separators): `*` stays within one label or path segment, `**` crosses them, `?` is one such
 * character, `{a,b}` picks one of the alternatives and `[…]` a character class.
 */
export function globToRegExp(pattern: string): RegExp {
  let source = "";
  for (let index = 0; index < pattern.length; index++) {
    const character = pattern[index];
    if (character === "*") {
      if (pattern[index + 1] === "*") {
        source += ".*";
        index++;
      } else {
        source += "[^./]*";
      }
    } else if (character === "?") {
      source += "[^./]";
    } else if (character === "{") {
      const end = pattern.indexOf("}", index);
      if (end === -1) {
        source += "\\{";
        continue;
      }
      source += `(?:${pattern.slice(index + 1, end).split(",").map(escapeRegExp).join("|")})`;
      index = end;
    } else if (character === "[") {
      const end = pattern.indexOf("]", index);
      if (end === -1) {
        source += "\\[";
        continue;
      }
      const body = pattern.slice(index + 1, end).replace(/^!/, "^").replace(/\\/g, "\\\\");
      source += `[${body}]`;
      index = end;
    } else {
      source += escapeRegExp(character);
    }
  }
  return new RegExp(`^${source}$`);
}

function parse(url: string): URL | null {
  try {
    return new URL(url);
  } catch {
    return null;
  }
}

/**
 * GoTrue's IsRedirectURLValid: a URL on site_url's host, a loopback address, or one matching an
 * `additional_redirect_urls` pattern (compared without its fragment).
 */
export function isRedirectUrlValid(settings: AuthSettings, redirectUrl: string): boolean {
  if (redirectUrl === "") return false;
  const target = parse(redirectUrl);
  if (!target) return false;
  const site = parse(settings.siteUrl);
  if (site && site.hostname === target.hostname) return true;
  const hostname = target.hostname.replace(/^\[|\]$/g, "");
  const scheme = target.protocol.replace(/:$/, "").toLowerCase();
  if (DECIMAL_IP.test(hostname)) return false;
  if (isIP(hostname)) return hostname === "::1" || hostname.startsWith("127.");
  if ((scheme === "http" || scheme === "https") && !REGULAR_HOSTNAME.test(hostname)) return false;
  const withoutFragment = redirectUrl.split("#")[0];
  return settings.additionalRedirectUrls.some((pattern) => globToRegExp(pattern).test(withoutFragment));
}

/**
 * Where a link or redirect should lead (GoTrue's GetReferrer): the request's `redirect_to` (query,
 * or a value the body carried) when allowed, else the Referer header when allowed, else site_url.
 */
export function referrer(request: Request, settings: AuthSettings, bodyRedirect?: string | null): string {
  const requested = request.headers.get("redirect_to") || new URL(request.url).searchParams.get("redirect_to") || bodyRedirect || "";
  if (isRedirectUrlValid(settings, requested)) return requested;
  const header = request.headers.get("referer") ?? "";
  if (isRedirectUrlValid(settings, header)) return header;
  return settings.siteUrl;
}
