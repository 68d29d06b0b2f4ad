/**
 * Response rules: every header name is an HTTP field name. Names are never templates (only values
 * are resolved), so a name HTTP refuses would fail every run: refuse it when the workflow is saved.
 */
import type { ConfigRule } from "../../state/config-rules.ts";
import { HEADER_NAME_PATTERN } from "./headers.ts";

/** The header names of a Response. */
export const responseRules: readonly ConfigRule[] = [
  {
    rule: "keys_match",
    field: "headers",
    pattern: HEADER_NAME_PATTERN,
    message: "header name {key} is not a valid HTTP field name (RFC 9110: letters, digits and !#$%&'*+-.^_`|~ only; no spaces or line breaks)",
  },
];
