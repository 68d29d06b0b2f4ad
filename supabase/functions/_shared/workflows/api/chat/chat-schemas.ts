/** The request bodies of the chat endpoints, in one place (docs/openapi.yaml agrees with them). */
import { z } from "zod";

/** A chat's identifier as its URL carries it. */
export const CHAT_IDENTIFIER = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/** The largest body a chat endpoint reads (a message is at most 10,000 characters). */
export const MAX_CHAT_BODY_BYTES = 64 * 1024;

/** POST /chat/{identifier}: a message, in a conversation (a new one when omitted). */
export const chatMessageSchema = z.object({
  message: z.string().trim().min(1, "write a message").max(10_000),
  conversationId: z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, "letters, digits, _ and -, at most 128").optional(),
}).strict();

/** POST /chat/{identifier}/login. */
export const chatLoginSchema = z.object({ password: z.string().min(1).max(200) }).strict();

/** POST /chat/{identifier}/otp. */
export const chatCodeRequestSchema = z.object({ email: z.string().min(1).max(320) }).strict();

/** POST /chat/{identifier}/otp/verify. */
export const chatCodeSchema = z.object({ email: z.string().min(1).max(320), code: z.string().regex(/^\s*[0-9]{6}\s*$/, "the 6-digit code") }).strict();
