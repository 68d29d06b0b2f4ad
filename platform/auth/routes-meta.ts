import { Hono } from "hono";
import type { AuthContext } from "./context.ts";

/** The GoTrue release whose behaviour this service follows (the one `supabase start` pins). */
export const GOTRUE_VERSION = "v2.189.0";

/** External providers GET /settings always lists, each false unless enabled in config.toml. */
const KNOWN_PROVIDERS = [
  "anonymous_users", "apple", "azure", "bitbucket", "discord", "facebook", "figma", "fly", "github", "gitlab",
  "google", "keycloak", "kakao", "linkedin", "linkedin_oidc", "notion", "spotify", "slack", "slack_oidc",
  "workos", "twitch", "twitter", "x", "zoom", "email", "phone", "saml", "web3_solana", "web3_ethereum",
];

/** GET /health, GET /settings and GET /.well-known/jwks.json. */
export function metaRoutes(context: AuthContext): Hono {
  const { settings } = context;
  const app = new Hono();
  app.get("/health", () =>
    Response.json({ version: GOTRUE_VERSION, name: "GoTrue", description: "GoTrue is a user registration and authentication API" }),
  );
  app.get("/settings", () => {
    const external: Record<string, boolean> = Object.fromEntries(KNOWN_PROVIDERS.map((name) => [name, settings.externalProviders.includes(name)]));
    external.anonymous_users = settings.enableAnonymousSignIns;
    external.email = settings.emailEnabled;
    external.phone = settings.phoneEnabled;
    external.web3_solana = settings.web3SolanaEnabled;
    external.web3_ethereum = settings.web3EthereumEnabled;
    return Response.json({
      external,
      disable_signup: !settings.enableSignup,
      mailer_autoconfirm: settings.mailerAutoconfirm,
      phone_autoconfirm: settings.smsAutoconfirm,
      sms_provider: "twilio",
      saml_enabled: false,
      passkeys_enabled: settings.passkeyEnabled,
    });
  });
  // The public halves of the signing keys (never the HS256 secret), which auth-js getClaims and
  // other verifiers fetch; empty when tokens are signed with the secret alone.
  app.get("/.well-known/jwks.json", () => Response.json({ keys: context.keys.published }, { headers: { "Cache-Control": "public, max-age=600" } }));
  return app;
}
