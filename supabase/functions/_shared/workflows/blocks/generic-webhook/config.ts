/**
 * Webhook trigger config: the Input Format (as the API trigger's), the path it listens on
 * (`POST /api/webhooks/trigger/{path}`, unique among active deployments: the deploy checks it) and
 * its optional authentication. `token` is best a `{{NAME}}` reference to an environment variable:
 * the config is readable by every member of the workspace, the variable's value is not.
 */
import { z } from "zod";
import type { ConfigRule } from "../../state/config-rules.ts";
import { inputFieldSchema, inputFormatRules } from "../input-format.ts";

/** A path segment: letters, digits and `_ . ~ -` (RFC 3986's unreserved characters), 1 to 128 of them. */
export const WEBHOOK_PATH = /^[A-Za-z0-9][A-Za-z0-9_.~-]{0,127}$/;

/** An HTTP header name (RFC 9110 token characters). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;

/** The config of a `generic_webhook` block. */
export const webhookConfigSchema = z
  .object({
    inputFormat: z.array(inputFieldSchema).max(100).optional(),
    path: z.string().regex(WEBHOOK_PATH).optional(),
    requireAuth: z.boolean().optional(),
    token: z.string().min(1).max(1024).optional(),
    // Empty (or absent): the token comes as `Authorization: Bearer <token>`.
    secretHeaderName: z.union([z.literal(""), z.string().regex(HEADER_NAME)]).optional(),
  })
  .strict();

/** The Input Format's rules, and a token whenever authentication is on. */
export const webhookRules: readonly ConfigRule[] = [
  ...inputFormatRules,
  { rule: "requires", where: { field: "requireAuth", in: [true] }, field: "token", blankIsMissing: true, message: "requireAuth needs a token (best a {{NAME}} environment variable)" },
];
