import type { StackConfig } from "../config/stack-config.ts";
import { functionEnvironment } from "../functions-host/launch.ts";

/** The variables `supabase status -o env` prints, with this stack's values. */
export function statusVariables(config: StackConfig): Record<string, string> {
  return {
    API_URL: config.apiUrl,
    REST_URL: `${config.apiUrl}/rest/v1`,
    GRAPHQL_URL: `${config.apiUrl}/graphql/v1`,
    FUNCTIONS_URL: `${config.apiUrl}/functions/v1`,
    STORAGE_URL: `${config.apiUrl}/storage/v1`,
    STUDIO_URL: `http://127.0.0.1:${config.ports.studio}`,
    DB_URL: config.dbUrl,
    MAILPIT_URL: `http://127.0.0.1:${config.ports.mail}`,
    PUBLISHABLE_KEY: config.publishableKey,
    SECRET_KEY: config.secretKey,
    JWT_SECRET: config.jwtSecret,
    ANON_KEY: config.anonKey,
    SERVICE_ROLE_KEY: config.serviceRoleKey,
  };
}

/** The block `supabase start` prints: where everything is and which keys to use. */
export function formatSummary(config: StackConfig): string {
  const vars = statusVariables(config);
  const rows: [string, string][] = [
    ["API URL", vars.API_URL],
    ["REST URL", vars.REST_URL],
    ["Functions URL", vars.FUNCTIONS_URL],
    ["Storage URL", vars.STORAGE_URL],
    ["Studio URL", vars.STUDIO_URL],
    ["DB URL", vars.DB_URL],
    ["Mail URL", vars.MAILPIT_URL],
    ["Publishable key", vars.PUBLISHABLE_KEY],
    ["Secret key", vars.SECRET_KEY],
    ["anon key", vars.ANON_KEY],
    ["service_role key", vars.SERVICE_ROLE_KEY],
    ["JWT secret", vars.JWT_SECRET],
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  return rows.map(([label, value]) => `${label.padStart(width)}: ${value}`).join("\n");
}

/** The environment test suites and benchmarks read to reach a stack (see test/helpers/env.ts). */
export function clientEnvironment(config: StackConfig): Record<string, string> {
  const vars = statusVariables(config);
  return {
    SUPABASE_URL: vars.API_URL,
    SUPABASE_ANON_KEY: vars.ANON_KEY,
    SUPABASE_SERVICE_ROLE_KEY: vars.SERVICE_ROLE_KEY,
    SUPABASE_PUBLISHABLE_KEY: vars.PUBLISHABLE_KEY,
    SUPABASE_SECRET_KEY: vars.SECRET_KEY,
    SUPABASE_JWT_SECRET: vars.JWT_SECRET,
    SUPABASE_DB_URL: vars.DB_URL,
    MAIL_URL: vars.MAILPIT_URL,
    STUDIO_URL: vars.STUDIO_URL,
  };
}

/**
 * The line `npm start` and `npm test` print about outbound calls: what OUTBOUND_ALLOWED_HOSTS the
 * stack's functions get, since the local stacks open loopback on the ports around their own
 * (hosted deployments do not).
 */
export function formatOutboundNotice(config: StackConfig): string {
  const allowed = functionEnvironment(config).OUTBOUND_ALLOWED_HOSTS ?? "";
  return allowed
    ? `Workflows may call these non-public addresses: OUTBOUND_ALLOWED_HOSTS=${allowed} (never the stack's own ports, which OUTBOUND_DENIED_ADDRESSES refuses; local only; hosted deployments leave both empty).`
    : "Workflows may call public addresses only (OUTBOUND_ALLOWED_HOSTS is empty).";
}
