/**
 * The `chat` function's routes, at `/chat/...` (as the gateway's root route and hosted Supabase
 * pass the path) and at `/functions/v1/chat/...` (as some runtimes pass it). chat-endpoints.ts
 * describes each.
 */
import type { Hono } from "hono";
import { createRouter, type Route } from "../../../http/routing.ts";
import { workflowErrors, workflowLog } from "../../workflow-errors.ts";
import { defaultRunServices, type RunServices } from "../run-services.ts";
import { handleChatCodeRequest, handleChatCodeVerify, handleChatConfig, handleChatLogin, handleChatLogout, handleChatMessage, handleChatPage } from "./chat-endpoints.ts";

/** The chat function's Hono app. */
export function createChatApp(services: () => RunServices = defaultRunServices): Hono {
  const routes = ["/chat", "/functions/v1/chat"].flatMap((prefix): Route[] => [
    { method: "GET", path: `${prefix}/:identifier`, handle: (c) => handleChatPage(c, services()) },
    { method: "POST", path: `${prefix}/:identifier`, handle: (c) => handleChatMessage(c, services()) },
    { method: "GET", path: `${prefix}/:identifier/config`, handle: (c) => handleChatConfig(c, services()) },
    { method: "POST", path: `${prefix}/:identifier/login`, handle: (c) => handleChatLogin(c, services()) },
    { method: "POST", path: `${prefix}/:identifier/otp`, handle: (c) => handleChatCodeRequest(c, services()) },
    { method: "POST", path: `${prefix}/:identifier/otp/verify`, handle: (c) => handleChatCodeVerify(c, services()) },
    { method: "POST", path: `${prefix}/:identifier/logout`, handle: (c) => handleChatLogout(c, services()) },
  ]);
  return createRouter(routes, { errors: workflowErrors, logger: workflowLog.with({ component: "chat" }) });
}
