/**
 * Masking of secret values (the workspace's environment variables) in everything a run hands back:
 * its result (output, Response, error, trace spans with their inputs and outputs, context) and the
 * spans it reports as blocks finish. Blocks still receive the real values (a request must carry
 * the real token); only copies leaving the engine are masked, as Sim and GitHub Actions mask
 * secrets in logs.
 *
 * What is masked, by the length of the secret value (`***` replaces it):
 *  - 8 characters or more: every occurrence inside any string or object key, also JSON-escaped,
 *    URL-encoded (`%20` or `+` for spaces) and base64-encoded (standard or URL-safe, at any offset
 *    within longer base64 text); and a number whose text is the value;
 *  - 4 to 7 characters: occurrences standing alone, not touching a letter, digit or `_` (so `prod`
 *    is masked in `env prod` but not in `production`), and a number whose text is the value;
 *  - 1 to 3 characters: only a string that is exactly the value.
 * Masking stops accidental disclosure. It cannot stop code written to disguise a value (reversed,
 * split into characters): whoever may edit a workflow can use its secrets.
 *
 * Echoes of the run's own input are not masked. Whoever sent the input (a chat user, a webhook's
 * caller) knows what they typed; masking a secret inside the echo of it would tell them their
 * guess of a secret was right (`***` back for the right value, their text back for a wrong one).
 * So an occurrence of a secret lying wholly inside an occurrence of an input text is left as it
 * is; one that only overlaps it (typing `a` does not unmask `abcdefgh`) is masked as ever. This
 * is a text rule, not provenance: a run that echoes its input *and* shows the secret itself lets
 * a sender who typed the right value see it shown where a wrong guess sees `***` (docs/security.md).
 */

/** What replaces a secret. */
export const MASK = "***";

/** Values at least this long are masked wherever they appear, in encoded forms too. */
export const MIN_EMBEDDED_SECRET_LENGTH = 8;

/** Values at least this long (and shorter than the above) are masked where they stand alone. */
export const MIN_WORD_SECRET_LENGTH = 4;

/** Masks secrets in values leaving a run. */
export interface Redactor {
  /** True when there is nothing to mask: `redact` then returns its argument itself. */
  readonly idle: boolean;
  /** A masked copy of a JSON-like value (arrays and plain objects are copied; the argument is never changed). */
  redact<T>(value: T): T;
  /** A masked copy of one string. */
  redactText(text: string): string;
}

const IDLE: Redactor = { idle: true, redact: (value) => value, redactText: (text) => text };

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function base64(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/=+$/, "");
}

/**
 * The base64 text a value becomes inside longer base64 text, for each of the three offsets it can
 * start at: characters that also depend on the neighbouring bytes are left out of each form.
 */
function base64Forms(value: string): string[] {
  const bytes = new TextEncoder().encode(value);
  const forms: string[] = [];
  for (let offset = 0; offset < 3; offset++) {
    const padded = new Uint8Array(offset + bytes.length);
    padded.set(bytes, offset);
    let encoded = base64(padded);
    // With `offset` bytes before it, the first character(s) mix those bytes with the value's.
    encoded = encoded.slice(offset === 0 ? 0 : offset + 1);
    // When the value does not end on a 3-byte boundary, the last character mixes in what follows.
    if ((offset + bytes.length) % 3 !== 0) encoded = encoded.slice(0, -1);
    forms.push(encoded, encoded.replaceAll("+", "-").replaceAll("/", "_"));
  }
  return forms;
}

/** Every form of a long secret worth looking for. */
function embeddedForms(value: string): string[] {
  const forms = [value, JSON.stringify(value).slice(1, -1), encodeURIComponent(value), encodeURIComponent(value).replaceAll("%20", "+"), ...base64Forms(value)];
  return forms.filter((form) => form.length >= MIN_EMBEDDED_SECRET_LENGTH);
}

/** The input texts a redactor leaves alone wherever they are echoed (see the module comment). */
export interface EchoOptions {
  /** The run's input texts (a chat message, a webhook body's strings). */
  echoes?: Iterable<string>;
}

/** Where `needle` occurs in `text`, as [start, end) intervals. */
function occurrences(text: string, needle: string): [number, number][] {
  const found: [number, number][] = [];
  for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + 1)) found.push([at, at + needle.length]);
  return found;
}

/** The strings of a run's input, for EchoOptions: iterative (input may be deep) and bounded. */
export function inputTexts(input: unknown, limit = 1000): string[] {
  const texts: string[] = [];
  const stack: unknown[] = [input];
  while (stack.length > 0 && texts.length < limit) {
    const value = stack.pop();
    if (typeof value === "string") texts.push(value);
    else if (Array.isArray(value)) stack.push(...value);
    else if (value !== null && typeof value === "object") stack.push(...Object.values(value));
  }
  return texts;
}

/** A redactor for these secret values (empty ones are ignored); idle when there are none. */
export function secretRedactor(secrets: Iterable<string>, options: EchoOptions = {}): Redactor {
  const values = [...new Set(secrets)].filter((value) => value.length > 0);
  if (values.length === 0) return IDLE;
  // Only echoes that could hold a secret matter; the rest would cost a search for nothing.
  const minimum = Math.min(...values.map((value) => value.length));
  const echoes = [...new Set(options.echoes ?? [])].filter((echo) => echo.length >= minimum);
  const echoSet = new Set(echoes);
  const whole = new Set(values);
  const numeric = new Set(values.filter((value) => value.length >= MIN_WORD_SECRET_LENGTH));
  // Longest first, so a secret containing another is masked whole.
  const embedded = [...new Set(values.filter((value) => value.length >= MIN_EMBEDDED_SECRET_LENGTH).flatMap(embeddedForms))].sort((a, b) => b.length - a.length);
  const words = values
    .filter((value) => value.length >= MIN_WORD_SECRET_LENGTH && value.length < MIN_EMBEDDED_SECRET_LENGTH)
    .sort((a, b) => b.length - a.length)
    .map((word) => ({ word, pattern: new RegExp(`(?<![A-Za-z0-9_])${escapeRegExp(word)}(?![A-Za-z0-9_])`, "g") }));
  // Text shorter than every form cannot hold one, which spares most keys and labels any search.
  const shortest = Math.min(...embedded.map((form) => form.length), ...words.map(({ word }) => word.length));

  // `includes` first: most text holds no secret, and a plain search is far cheaper than a pattern.
  /**
   * Masks `text` where it echoes some input: each secret occurrence (every form, every word match)
   * is found in the original text, those lying wholly inside an echoed span are kept, and the rest,
   * merged where they overlap, become MASK.
   */
  const redactAroundEchoes = (text: string, spans: [number, number][]): string => {
    const hits: [number, number][] = [];
    for (const form of embedded) hits.push(...occurrences(text, form));
    for (const { pattern } of words) for (const match of text.matchAll(pattern)) hits.push([match.index, match.index + match[0].length]);
    const masked = hits.filter(([start, end]) => !spans.some(([from, to]) => from <= start && end <= to)).sort((a, b) => a[0] - b[0] || b[1] - a[1]);
    const merged: [number, number][] = [];
    for (const [start, end] of masked) {
      const last = merged.at(-1);
      if (last && start < last[1]) last[1] = Math.max(last[1], end);
      else merged.push([start, end]);
    }
    let out = "";
    let at = 0;
    for (const [start, end] of merged) {
      out += text.slice(at, start) + MASK;
      at = end;
    }
    return out + text.slice(at);
  };

  const redactText = (text: string): string => {
    if (echoSet.has(text)) return text;
    if (whole.has(text)) return MASK;
    if (text.length < shortest) return text;
    if (echoes.length > 0) {
      const spans = echoes.flatMap((echo) => (echo.length <= text.length ? occurrences(text, echo) : []));
      if (spans.length > 0) return redactAroundEchoes(text, spans);
    }
    let masked = text;
    for (const form of embedded) if (masked.includes(form)) masked = masked.replaceAll(form, MASK);
    for (const { word, pattern } of words) if (masked.includes(word)) masked = masked.replace(pattern, MASK);
    return masked;
  };
  const copies = new Map<object, unknown>();
  // Results repeat their keys and labels (`id`, `status`, block names) many times over.
  const texts = new Map<string, string>();
  const cachedText = (text: string): string => {
    let masked = texts.get(text);
    if (masked === undefined) {
      masked = redactText(text);
      texts.set(text, masked);
    }
    return masked;
  };
  const walk = (value: unknown): unknown => {
    if (typeof value === "string") return cachedText(value);
    if (typeof value === "number") return numeric.has(String(value)) && !echoSet.has(String(value)) ? MASK : value;
    if (value === null || typeof value !== "object") return value;
    const done = copies.get(value);
    if (done !== undefined) return done;
    if (Array.isArray(value)) {
      const copy: unknown[] = [];
      copies.set(value, copy);
      for (const item of value) copy.push(walk(item));
      return copy;
    }
    const prototype = Object.getPrototypeOf(value);
    if (prototype !== Object.prototype && prototype !== null) return value;
    const copy: Record<string, unknown> = {};
    copies.set(value, copy);
    for (const [key, item] of Object.entries(value)) {
      const masked = cachedText(key);
      // Outputs parsed from JSON may own a `__proto__` key; assigning it would set the prototype instead.
      if (masked === "__proto__") Object.defineProperty(copy, masked, { value: walk(item), enumerable: true, writable: true, configurable: true });
      else copy[masked] = walk(item);
    }
    return copy;
  };
  return {
    idle: false,
    redact: <T>(value: T): T => {
      try {
        return walk(value) as T;
      } finally {
        copies.clear();
        texts.clear();
      }
    },
    redactText,
  };
}
