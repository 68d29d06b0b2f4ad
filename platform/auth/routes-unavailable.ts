import { Hono } from "hono";
import { requireUser } from "./authenticate.ts";
import type { AuthContext } from "./context.ts";
import { AuthError, badRequest, notFound, unprocessable } from "./errors.ts";

/** Providers GoTrue can redirect to (GET /authorize); none is reachable from here without an outside account. */
const OAUTH_PROVIDERS = [
  "apple", "azure", "bitbucket", "discord", "facebook", "figma", "fly", "github", "gitlab", "google", "kakao", "keycloak",
  "linkedin", "linkedin_oidc", "notion", "snapchat", "spotify", "slack", "slack_oidc", "twitch", "twitter", "x", "workos", "zoom",
];

/**
 * The GoTrue routes of features that need an outside identity provider or device (OAuth, SAML SSO,
 * Web3 wallets, passkeys, identity linking): each answers as GoTrue does when the feature is
 * off, in GoTrue's JSON error shape, so supabase-js reports a clear AuthApiError.
 */
export function unavailableRoutes(context: AuthContext): Hono {
  const app = new Hono();
  app.get("/authorize", (c) => {
    const provider = (c.req.query("provider") ?? "").toLowerCase();
    const reason = OAUTH_PROVIDERS.includes(provider) ? "provider is not enabled" : `Provider ${provider} could not be found`;
    throw badRequest("validation_failed", `Unsupported provider: ${reason}`);
  });
  app.on(["GET", "POST"], "/callback", () => {
    throw badRequest("bad_oauth_callback", "OAuth state parameter missing");
  });
  app.all("/sso", () => {
    throw notFound("saml_provider_disabled", "SAML 2.0 is disabled");
  });
  app.all("/sso/*", () => {
    throw notFound("saml_provider_disabled", "SAML 2.0 is disabled");
  });
  app.all("/admin/sso/*", () => {
    throw notFound("saml_provider_disabled", "SAML 2.0 is disabled");
  });
  app.all("/passkeys", () => {
    throw notFound("passkey_disabled", "Passkeys are disabled");
  });
  app.all("/passkeys/*", () => {
    throw notFound("passkey_disabled", "Passkeys are disabled");
  });
  app.all("/user/identities/*", async (c) => {
    await requireUser(c.req.raw, context);
    if (!context.settings.manualLinkingEnabled) throw notFound("manual_linking_disabled", "Manual linking is disabled");
    throw notFound("identity_not_found", "Identity linking needs an OAuth provider, which the local platform does not provide");
  });
  return app;
}

/** The grants of POST /token that need an outside provider or wallet, answered as GoTrue answers them when off. */
export function unavailableGrant(context: AuthContext, grantType: string): AuthError | null {
  if (grantType === "web3") {
    const { web3SolanaEnabled, web3EthereumEnabled } = context.settings;
    return web3SolanaEnabled || web3EthereumEnabled ? unprocessable("web3_provider_disabled", "Web3 sign-in needs a wallet signature, which the local platform does not check") : unprocessable("web3_provider_disabled", "Web3 provider is disabled");
  }
  if (grantType === "id_token") return badRequest("provider_disabled", "Provider (issuer \"\") is not enabled");
  return null;
}
