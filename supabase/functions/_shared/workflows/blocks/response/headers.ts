/**
 * The headers a Response block sets, checked against RFC 9110 before any of them reaches an HTTP
 * answer: a name is a token (§5.1: letters, digits and ``!#$%&'*+-.^_`|~``), a value is visible
 * characters, spaces and tabs with none at either end (§5.5; no CR, LF or NUL, so no header can be
 * smuggled in, and nothing outside Latin-1, which HTTP cannot carry). Names differing only in case
 * are the same header, so both may not be set; and the headers that describe the connection or
 * the message's framing (§7.6.1, §8.6, RFC 9112 §6.1) belong to the server, not to a workflow.
 */
import { WorkflowError } from "../../core/errors.ts";
import { stringifyForText } from "../../core/resolver.ts";
import { preview } from "../../core/values.ts";

/**
 * An RFC 9110 token, as pattern text: the save-time rule (rules.ts) and the run-time check below
 * share it. Written so POSIX regular expressions (the database's rule interpreter) read it as
 * JavaScript does: the `-` last in its class, no escapes.
 */
export const HEADER_NAME_PATTERN = "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$";
const TOKEN = new RegExp(HEADER_NAME_PATTERN);
/** Visible ASCII, obs-text (0x80-0xFF), and SP / HTAB inside; nothing else. */
const FIELD_VALUE = /^(?:[\x21-\x7e\x80-\xff](?:[\x20\x09\x21-\x7e\x80-\xff]*[\x21-\x7e\x80-\xff])?)?$/;

/** Headers the server sets itself: a workflow setting them could break the answer's framing. */
export const SERVER_HEADERS: ReadonlySet<string> = new Set(["connection", "content-length", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade"]);

/** The headers as text, or a BLOCK_FAILED naming the first header at fault and why. */
export function checkedHeaders(headers: Record<string, unknown>): Record<string, string> {
  const checked: Record<string, string> = {};
  const seen = new Map<string, string>();
  for (const [name, raw] of Object.entries(headers)) {
    if (!TOKEN.test(name)) {
      throw new WorkflowError("BLOCK_FAILED", `header name ${preview(name)} is not a valid HTTP field name (RFC 9110: letters, digits and !#$%&'*+-.^_\`|~ only)`);
    }
    const lower = name.toLowerCase();
    if (SERVER_HEADERS.has(lower)) throw new WorkflowError("BLOCK_FAILED", `header "${name}" is set by the server, not by a workflow`);
    const earlier = seen.get(lower);
    if (earlier !== undefined) throw new WorkflowError("BLOCK_FAILED", `headers "${earlier}" and "${name}" are the same header (names ignore case); set it once`);
    seen.set(lower, name);
    const value = stringifyForText(raw);
    if (!FIELD_VALUE.test(value)) {
      throw new WorkflowError(
        "BLOCK_FAILED",
        `header "${name}" has a value HTTP cannot carry (${preview(value)}): no line breaks, NUL or other control characters, nothing outside Latin-1, and no spaces at either end (RFC 9110)`,
      );
    }
    checked[name] = value;
  }
  return checked;
}
