// Chat deployments (docs/triggers.md, "Chat deployments"): each chat's page and its endpoints at
// {chat_subdomain_url} — locally http://127.0.0.1:54321/chat/<identifier> (the gateway's root route,
// or <identifier>.chat.localhost), hosted https://<project>.supabase.co/functions/v1/chat/<identifier>.
// verify_jwt is off: visitors have no Supabase session; the chat's own access (public, password,
// e-mail code) and its signed session cookie are checked here and in SQL.
import { createChatApp } from "../_shared/workflows/api/chat/chat-routes.ts";

const app = createChatApp();

Deno.serve((request) => app.fetch(request));
