import { z } from "zod";

/**
 * Boundary shapes of the mail catcher. The send body mirrors what the `resend` client posts to
 * `POST /emails` (snake_case, attachments already base64), so anything Resend would accept is caught.
 */
const recipients = z.union([z.string().min(1), z.array(z.string().min(1)).min(1).max(50)]);

export const attachmentSchema = z
  .object({
    content: z.string().optional(),
    filename: z.string().optional(),
    path: z.url().optional(),
    content_type: z.string().optional(),
    content_id: z.string().optional(),
  })
  .refine((value) => value.content !== undefined || value.path !== undefined, {
    message: "Each attachment needs either `content` or `path`.",
  })
  .refine((value) => value.content === undefined || /^[A-Za-z0-9+/=\s_-]*$/.test(value.content), {
    message: "Attachment `content` must be base64.",
  });

export const emailBodySchema = z
  .object({
    from: z.string().min(1),
    to: recipients,
    subject: z.string().min(1),
    html: z.string().optional(),
    text: z.string().optional(),
    cc: recipients.optional(),
    bcc: recipients.optional(),
    reply_to: recipients.optional(),
    headers: z.record(z.string(), z.string()).optional(),
    tags: z.array(z.object({ name: z.string(), value: z.string() })).optional(),
    attachments: z.array(attachmentSchema).optional(),
    scheduled_at: z.string().optional(),
    template: z.object({ id: z.string(), variables: z.record(z.string(), z.unknown()).optional() }).optional(),
    topic_id: z.string().optional(),
  })
  .refine((value) => value.html !== undefined || value.text !== undefined || value.template !== undefined, {
    message: "Either `html`, `text` or `template` must be provided.",
  });

export type EmailBody = z.infer<typeof emailBodySchema>;

/** An email as the store keeps it: attachments resolved to bytes (fetched when given by `path`). */
export interface OutgoingEmail {
  body: EmailBody;
  attachments: { filename: string; content_type: string; content_id?: string; bytes: Buffer }[];
}

export const batchBodySchema = z.array(emailBodySchema).min(1).max(100);

export const listQuerySchema = z.object({
  /** Only messages with this address among their `to` recipients (case-insensitive). */
  to: z.string().min(1).optional(),
  limit: z.coerce.number().int().min(1).max(1000).optional(),
});

export type ListQuery = z.infer<typeof listQuerySchema>;

/** Metadata of a stored attachment; the bytes are served by `/api/messages/{id}/attachments/{index}`. */
export interface StoredAttachment {
  index: number;
  filename: string;
  content_type: string;
  content_id?: string;
  size: number;
}

/** A caught message as `GET /api/messages/{id}` returns it. */
export interface StoredMessage {
  id: string;
  created_at: string;
  from: string;
  to: string[];
  cc: string[];
  bcc: string[];
  reply_to: string[];
  subject: string;
  html: string | null;
  text: string | null;
  headers: Record<string, string>;
  tags: { name: string; value: string }[];
  scheduled_at: string | null;
  attachments: StoredAttachment[];
}

/** A list entry: the message without bodies. */
export type MessageSummary = Omit<StoredMessage, "html" | "text" | "headers">;
