/** Connection details of the stack under test, exported by `npm test` into the vitest environment. */
function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the tests through \`npm test\`, which starts the stack and exports it.`);
  return value;
}

export const env = {
  url: required("SUPABASE_URL"),
  anonKey: required("SUPABASE_ANON_KEY"),
  serviceRoleKey: required("SUPABASE_SERVICE_ROLE_KEY"),
  publishableKey: required("SUPABASE_PUBLISHABLE_KEY"),
  secretKey: required("SUPABASE_SECRET_KEY"),
  jwtSecret: required("SUPABASE_JWT_SECRET"),
  dbUrl: required("SUPABASE_DB_URL"),
  mailUrl: required("MAIL_URL"),
};
