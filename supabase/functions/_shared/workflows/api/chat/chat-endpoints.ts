/**
 * The chat deployment's endpoints (docs/triggers.md, "Chat deployments"), served by the `chat`
 * function at `{chat_subdomain_url}` (locally `/chat/<identifier>` at the gateway root):
 *
 *   GET  /chat/{identifier}             the page (HTML)
 *   GET  /chat/{identifier}/config      what the page shows, and whether the session is open
 *   POST /chat/{identifier}             {message, conversationId?} → the answer as SSE
 *   POST /chat/{identifier}/login       {password} → session cookie
 *   POST /chat/{identifier}/otp         {email} → a 6-digit code by e-mail
 *   POST /chat/{identifier}/otp/verify  {email, code} → session cookie
 *   POST /chat/{identifier}/logout      ends the session
 *
 * A message is admitted by admit_chat_run (the session and conversation checked in SQL, then the
 * usage and sync rate limit of the workspace's billing account, as every run) and streams exactly
 * as the execute endpoint's `"stream": true`, from the chat's chosen outputs; the turn is kept for
 * the conversation's history once the run is recorded. Refusals are `{error, code}`.
 */
import type { Context } from "hono";
import { readJson, readParams, validate } from "../../../http/body.ts";
import { HttpError } from "../../../http/errors.ts";
import { requestLogger } from "../../../http/logger.ts";
import { workflowErrors as errors, workflowLog } from "../../workflow-errors.ts";
import type { TriggerRequest } from "../../core/context.ts";
import { ValidationError } from "../../state/issues.ts";
import type { AdmittedSync, Refusal } from "../../runs/lifecycle-answers.ts";
import { finishRun, prepareRun, recordUnexpectedEnd, type PreparedRun } from "../../runs/run-lifecycle.ts";
import { streamRun } from "../execute-stream.ts";
import { watchCancellation } from "../../runs/run-lease.ts";
import { rateLimitHeaders } from "../rate-limit-headers.ts";
import type { RunServices } from "../run-services.ts";
import { chunkText, resolveSelectedOutputs, type SelectedOutput } from "../selected-outputs.ts";
import { sendChatCode } from "./chat-code-mail.ts";
import { pageHeaders, pageNonce, renderChatPage, renderMissingChatPage } from "./chat-page.ts";
import { CHAT_IDENTIFIER, chatCodeRequestSchema, chatCodeSchema, chatLoginSchema, chatMessageSchema, MAX_CHAT_BODY_BYTES } from "./chat-schemas.ts";
import { clearedCookie, readSession, SESSION_SECONDS, sessionCookie, signSession, type SessionState } from "./chat-session.ts";
import { incomingTrace } from "../../tracing/trace-context.ts";

/** A chat as chat_target answers it. */
interface ChatTarget {
  id: string;
  identifier: string;
  title: string;
  description: string | null;
  welcomeMessage: string | null;
  authType: "public" | "password" | "email";
  authVersion: number;
  outputs: string[];
  workflowId: string;
  workspaceId: string;
}

/** A sign-in the database accepted. */
interface SignedIn {
  status: 200;
  chatId: string;
  subject: string;
  authVersion: number;
  sessionId: string;
}

/** A chat message's run, admitted: with its trigger block, its input, the chat and who sent it. */
type ChatAdmitted = AdmittedSync & { triggerBlockId: string; input: unknown; chat: { id: string; outputs: string[] }; subject: string | null };

/** A refusal of the chat's SQL as `{error, code, …}`: every extra it carries (attemptsLeft, retryAfter, lockedUntil, authType), and Retry-After on a 429. */
function chatRefusal(refusal: Refusal): HttpError {
  const { status, outcome: _outcome, code, error, rateLimit, chat: _chat, subject: _subject, ...details } = refusal as Refusal & Record<string, unknown>;
  const headers = rateLimitHeaders(rateLimit as Refusal["rateLimit"], status === 429 ? Number(refusal.retryAfter ?? 1) : undefined);
  return new HttpError(status, code, error, details, headers);
}

/** The identifier of the request's path (404 for one no chat can have). */
function identifierOf(c: Context): string {
  const { identifier } = readParams(c.req.param() as Record<string, string>, errors);
  if (!CHAT_IDENTIFIER.test(identifier)) throw new HttpError(404, "NOT_FOUND", `No chat is deployed at "${identifier}"`);
  return identifier;
}

/** Reads a JSON body (as JSON only: a form from another site cannot post here). */
async function body(c: Context): Promise<unknown> {
  return await readJson(c.req.raw, { errors, maxBytes: MAX_CHAT_BODY_BYTES, contentType: "application/json" });
}

/** The chat, or null for an identifier none has. */
async function target(services: RunServices, identifier: string): Promise<ChatTarget | null> {
  const answer = (await services.call("chat_target", { p_identifier: identifier })) as { status: 200; chat: ChatTarget } | Refusal;
  return "chat" in answer ? answer.chat : null;
}

/**
 * Whether a session is open for this chat, as it stands now: the cookie's signature and access
 * version, then the database, since a logged-out session's cookie is still well signed.
 */
async function openSession(services: RunServices, chat: ChatTarget, state: SessionState): Promise<boolean> {
  if (chat.authType === "public") return true;
  if (state.kind !== "valid" || state.session.chatId !== chat.id || state.session.authVersion !== chat.authVersion) return false;
  return (await services.call("chat_session_active", { p_identifier: chat.identifier, p_session_id: state.session.sessionId })) === true;
}

/** The client's address as the gateway (or Supabase's proxy) forwarded it: whose wrong passwords and codes count together. */
function clientAddress(request: Request): string {
  return request.headers.get("x-forwarded-for")?.split(",")[0]?.trim() || "unknown";
}

/** A 200 that opens the session the database accepted. */
async function signedIn(request: Request, identifier: string, accepted: SignedIn, extra: Record<string, unknown> = {}): Promise<Response> {
  const value = await signSession({ chatId: accepted.chatId, subject: accepted.subject, authVersion: accepted.authVersion, sessionId: accepted.sessionId, expiresAt: Math.floor(Date.now() / 1000) + SESSION_SECONDS });
  return Response.json({ authenticated: true, ...extra }, { headers: { "Set-Cookie": sessionCookie(request, identifier, value), "Cache-Control": "no-store" } });
}

/** GET /chat/{identifier}: the page. */
export async function handleChatPage(c: Context, services: RunServices): Promise<Response> {
  const nonce = pageNonce();
  const { identifier } = readParams(c.req.param() as Record<string, string>, errors);
  const chat = CHAT_IDENTIFIER.test(identifier) ? await target(services, identifier) : null;
  if (!chat) return new Response(renderMissingChatPage(identifier, nonce), { status: 404, headers: pageHeaders(nonce) });
  const state = await readSession(c.req.raw, identifier);
  const authenticated = await openSession(services, chat, state);
  const page = renderChatPage({
    identifier, title: chat.title, description: chat.description, welcomeMessage: chat.welcomeMessage, authType: chat.authType, authenticated,
    email: authenticated && chat.authType === "email" && state.kind === "valid" ? state.session.subject : null,
  }, nonce);
  return new Response(page, { headers: pageHeaders(nonce) });
}

/** GET /chat/{identifier}/config. */
export async function handleChatConfig(c: Context, services: RunServices): Promise<Response> {
  const identifier = identifierOf(c);
  const chat = await target(services, identifier);
  if (!chat) throw new HttpError(404, "NOT_FOUND", `No chat is deployed at "${identifier}"`);
  const state = await readSession(c.req.raw, identifier);
  const authenticated = await openSession(services, chat, state);
  return Response.json({
    identifier, title: chat.title, description: chat.description, welcomeMessage: chat.welcomeMessage, authType: chat.authType, authenticated,
    ...(authenticated && chat.authType === "email" && state.kind === "valid" ? { email: state.session.subject } : {}),
  }, { headers: { "Cache-Control": "no-store" } });
}

/** POST /chat/{identifier}/login. */
export async function handleChatLogin(c: Context, services: RunServices): Promise<Response> {
  const identifier = identifierOf(c);
  const { password } = validate(chatLoginSchema, await body(c), "body", errors);
  const answer = (await services.call("chat_password_login", { p_identifier: identifier, p_password: password, p_client: clientAddress(c.req.raw) })) as SignedIn | Refusal;
  if ("outcome" in answer) throw chatRefusal(answer);
  return await signedIn(c.req.raw, identifier, answer);
}

/** POST /chat/{identifier}/otp. */
export async function handleChatCodeRequest(c: Context, services: RunServices): Promise<Response> {
  const identifier = identifierOf(c);
  const { email } = validate(chatCodeRequestSchema, await body(c), "body", errors);
  // The same 202 for every well-formed address: only an allowed one under its send limit comes back
  // with a code to mail, so the answer never says who is on the allow-list.
  const answer = (await services.call("chat_request_code", { p_identifier: identifier, p_email: email })) as
    { status: 202; email: string; expiresAt: string; code?: string; title?: string } | Refusal;
  if ("outcome" in answer) throw chatRefusal(answer);
  if (answer.code !== undefined && answer.title !== undefined) await sendChatCode({ email: answer.email, code: answer.code, title: answer.title, expiresAt: answer.expiresAt });
  return Response.json({ sent: true, email: answer.email, expiresAt: new Date(answer.expiresAt).toISOString() }, { status: 202 });
}

/** POST /chat/{identifier}/otp/verify. */
export async function handleChatCodeVerify(c: Context, services: RunServices): Promise<Response> {
  const identifier = identifierOf(c);
  const { email, code } = validate(chatCodeSchema, await body(c), "body", errors);
  const answer = (await services.call("chat_verify_code", { p_identifier: identifier, p_email: email, p_code: code.trim(), p_client: clientAddress(c.req.raw) })) as SignedIn | Refusal;
  if ("outcome" in answer) throw chatRefusal(answer);
  return await signedIn(c.req.raw, identifier, answer, { email: answer.subject });
}

/** POST /chat/{identifier}/logout: ends the session in the database, so no copy of its cookie opens it again. */
export async function handleChatLogout(c: Context, services: RunServices): Promise<Response> {
  const identifier = identifierOf(c);
  const state = await readSession(c.req.raw, identifier);
  if (state.kind === "valid") await services.call("end_chat_session", { p_identifier: identifier, p_session_id: state.session.sessionId });
  return Response.json({ authenticated: false }, { headers: { "Set-Cookie": clearedCookie(c.req.raw, identifier), "Cache-Control": "no-store" } });
}

/** The refusal of a message whose session cookie was there but forged or expired. */
function sessionRefusal(state: SessionState, refusal: Refusal): HttpError | null {
  if (refusal.code !== "AUTH_REQUIRED") return null;
  if (state.kind === "invalid") return new HttpError(401, "INVALID_SESSION", "The chat session cookie is not valid: sign in again");
  if (state.kind === "expired") return new HttpError(401, "SESSION_EXPIRED", "The chat session has expired: sign in again");
  return null;
}

/** Records a message refused after admission as a failed run and answers `error`. */
async function refuseAdmitted(services: RunServices, executionId: string, error: HttpError): Promise<never> {
  await finishRun(services.call, executionId, { status: "failed", error: { message: error.message, code: error.code }, durationMs: 0 });
  throw error;
}

/** POST /chat/{identifier}: runs the message and streams the answer. */
export async function handleChatMessage(c: Context, services: RunServices): Promise<Response> {
  const request = c.req.raw;
  const identifier = identifierOf(c);
  const message = validate(chatMessageSchema, await body(c), "body", errors);
  const state = await readSession(request, identifier);
  const conversationId = message.conversationId ?? crypto.randomUUID();
  const timeoutMs = services.syncTimeoutMs;
  const answer = (await services.call("admit_chat_run", {
    p_identifier: identifier,
    p_session: state.kind === "valid"
      ? { chatId: state.session.chatId, subject: state.session.subject, authVersion: state.session.authVersion, sessionId: state.session.sessionId }
      : null,
    p_message: message.message,
    p_conversation_id: conversationId,
    p_lease_seconds: Math.ceil(timeoutMs / 1000) + 60,
    p_trace: incomingTrace(request.headers),
  })) as ChatAdmitted | Refusal;
  if (answer.outcome === "refused") throw sessionRefusal(state, answer) ?? chatRefusal(answer);
  const run = answer;
  const chat = answer.chat;

  try {
    let prepared: PreparedRun;
    try {
      prepared = await prepareRun(services.call, services.cache, run);
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      return await refuseAdmitted(services, run.executionId, new HttpError(409, "INVALID_WORKFLOW", error.message));
    }
    let selected: SelectedOutput[] | null = null;
    if (chat.outputs.length > 0) {
      const resolved = resolveSelectedOutputs(prepared.compiled, chat.outputs);
      if (!resolved.ok) {
        return await refuseAdmitted(services, run.executionId,
          new HttpError(409, "CHAT_OUTPUT_UNKNOWN", `The chat's output "${resolved.entry}" is unknown to the deployed workflow (${resolved.reason}): deploy the chat again`));
      }
      selected = resolved.selected;
    }
    const trigger: TriggerRequest = { kind: "chat", blockId: run.triggerBlockId, input: run.input };
    const files = services.files({ workspaceId: run.workflow.workspaceId, workflowId: run.workflow.id, executionId: run.executionId });
    return streamRun({
      services, run, prepared, trigger, selected, files, timeoutMs, request, lease: watchCancellation(services.cancelSignals, run.executionId),
      headers: { ...rateLimitHeaders(run.rateLimit), "X-Execution-Id": run.executionId, "X-Conversation-Id": conversationId, "Cache-Control": "no-store" },
      onEnded: async ({ result, output, chunks }) => {
        if (!result.success) return;
        await services.call("record_chat_turn", {
          p_chat_id: chat.id, p_conversation_id: conversationId, p_subject: answer.subject ?? null, p_message: message.message,
          p_answer: chunks.length > 0 ? chunks.join("") : chunkText(output), p_execution_id: run.executionId,
        });
      },
    });
  } catch (error) {
    if (error instanceof HttpError) throw error;
    requestLogger(workflowLog, request).error("chat_run_failed_unexpectedly", { executionId: run.executionId, error });
    await recordUnexpectedEnd(services.call, run.executionId, error);
    throw error;
  }
}
