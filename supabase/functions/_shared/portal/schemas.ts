import { z } from "zod";
import { uuidSchema } from "../http/uuid.ts";

/**
 * Boundary shapes of the portal's functions, in one place: the handlers validate with these and
 * the tests import the same schemas. docs/proposals-portal.md describes them for people.
 */

/** Body of generate-proposal-pdf. */
export const generatePdfBodySchema = z.object({ proposalId: uuidSchema() });

/** Body of send-proposal-email. */
export const sendEmailBodySchema = z.object({
  proposalId: uuidSchema(),
  recipientEmail: z.email().max(254),
});

/** Body of admin-reset-password (the password policy is checked separately, for a precise answer). */
export const resetPasswordBodySchema = z.object({
  userId: uuidSchema(),
  newPassword: z.string().min(1),
});

/** Query of approve-proposal (GET and POST). */
export const approvalQuerySchema = z.object({ token: z.string().min(1).max(200) });

/** Form posted by the approval page (application/x-www-form-urlencoded). */
export const approvalFormSchema = z.object({
  email: z.string().trim().min(1).max(254),
  action: z.enum(["approve", "reject"]),
});

/** Input of postal-code-lookup: `?cep=` on GET or `{ "cep": ... }` on POST. */
export const postalCodeInputSchema = z.object({ cep: z.string().min(1).max(20) });
