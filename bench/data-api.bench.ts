/**
 * Data API under RLS (`npm run bench -- data-api`): a technician reading their 20 newest proposals
 * as docs/proposals-portal.md tells clients to (`GET /rest/v1/proposals?technician_id=eq.<own
 * id>&order=created_at.desc&limit=20`; the row-level policies still decide what each caller may
 * see), at 1,000, 100,000 and 1,000,000 proposals spread over 1,000 technicians, so the cost curve
 * with the table's size is visible. Beside it, in the same run: bare PostgREST with the same
 * tokens (what the gateway costs) and the same query in plain SQL (what PostgREST and RLS cost).
 * Each request carries another technician's token, as a thousand users would, which also keeps
 * every caller under the gateway's 200 requests a minute.
 *
 * Also measured, on fewer requests: the same list with no filter, leaving RLS alone to pick the
 * rows. The three read policies (own, admin, super admin) are OR'ed, and a policy that is a
 * parameter (`(select has_role(…))`) makes the OR unusable for an index, so Postgres reads the
 * whole table for every such request: its cost grows with the table.
 */
import postgres, { type Sql } from "postgres";
import { loadConfig } from "../platform/config/stack-config.ts";
import { describeLoad, runLoad, type PreparedRequest } from "./gamification/load.ts";
import { ascending, percentile, report, requiredEnv, signedInToken } from "./bench-support.ts";

const TECHNICIANS = 1_000;
const SIZES = [1_000, 100_000, 1_000_000];
const REQUESTS = 4_000;
/** The unfiltered list reads the whole table each time: fewer requests keep it bounded at 1M rows. */
const UNFILTERED_REQUESTS = 200;
const CONCURRENCY = 8;
const SELECT = "id,code,status,total_value,created_at";

/** The id of technician `n` (1-based): fixed, so the data and the tokens agree. */
function technicianId(n: number): string {
  return `00000000-0000-4000-a000-${String(n).padStart(12, "0")}`;
}

/**
 * The technicians (auth users, whose profiles a trigger creates, with the technician role), a customer each with a valid
 * CNPJ, and one product: what every proposal refers to.
 */
async function createTechnicians(sql: Sql): Promise<string> {
  await sql`
    insert into auth.users (instance_id, id, aud, role, email, encrypted_password, email_confirmed_at, raw_app_meta_data, raw_user_meta_data,
                            created_at, updated_at, confirmation_token, recovery_token, email_change_token_new, email_change)
    select '00000000-0000-0000-0000-000000000000', ('00000000-0000-4000-a000-' || lpad(n::text, 12, '0'))::uuid, 'authenticated', 'authenticated',
           'bench-seller-' || n || '@bench.orbita.test', '', now(), '{}', '{}', now(), now(), '', '', '', ''
    from generate_series(1, ${TECHNICIANS}) n`;
  await sql`
    insert into public.user_roles (user_id, role)
    select ('00000000-0000-4000-a000-' || lpad(n::text, 12, '0'))::uuid, 'technician' from generate_series(1, ${TECHNICIANS}) n`;
  await sql`
    insert into public.customers (technician_id, company_name, contact_name, email, phone, cnpj)
    select ('00000000-0000-4000-a000-' || lpad(n::text, 12, '0'))::uuid, 'Bench customer ' || n, 'Bench contact', 'customer-' || n || '@bench.orbita.test',
           '11987654321', base || d1 || portal_private.cnpj_check_digit(base || d1)
    from generate_series(1, ${TECHNICIANS}) n
    cross join lateral (select '77' || lpad(n::text, 10, '0') as base) b
    cross join lateral (select portal_private.cnpj_check_digit(base)::text as d1) d`;
  const [{ id }] = await sql<{ id: string }[]>`
    insert into public.products (name, monthly_price, product_type, commission_percentage) values ('Bench product', 100, 'bench', 0.1) returning id`;
  return id;
}

/**
 * Grows public.proposals to `total` rows, round-robin over the technicians, as a bulk loader
 * would: the table's own triggers (codes, tokens, audit) are off inside the loading transaction,
 * so the rows carry their codes and tokens from here; foreign keys and checks still hold, and the
 * read path under test is unchanged.
 */
async function growProposals(sql: Sql, product: string, from: number, total: number): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`alter table public.proposals disable trigger user`;
    await tx`
      insert into public.proposals (code, customer_id, technician_id, product_id, monthly_value, contract_months, total_value,
                                    status, approval_token_expires_at, created_at)
      select 'BENCH-' || i, c.id, c.technician_id, ${product}, 100, 12, 1200, 'pending', now() + interval '30 days',
             now() - make_interval(secs => ${total} - i)
      from generate_series(${from + 1}::int, ${total}::int) as i
      join public.customers c on c.technician_id = ('00000000-0000-4000-a000-' || lpad((1 + i % ${TECHNICIANS})::text, 12, '0'))::uuid`;
    await tx`alter table public.proposals enable trigger user`;
  });
  await sql`analyze public.proposals`;
}

/** Median, p95 and reads per second of the plain SQL query, `count` times over 8 connections. */
async function plainSql(sql: Sql, count: number): Promise<{ perSecond: number; p50: number; p95: number }> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < count) {
      const technician = technicianId(1 + (next++ % TECHNICIANS));
      const sent = performance.now();
      await sql`select id, code, status, total_value, created_at from public.proposals where technician_id = ${technician} order by created_at desc limit 20`;
      latencies.push(performance.now() - sent);
    }
  }));
  const seconds = (performance.now() - started) / 1000;
  const sorted = ascending(latencies);
  return { perSecond: count / seconds, p50: percentile(sorted, 0.5), p95: percentile(sorted, 0.95) };
}

/** Grows the table through each size and measures the three paths at each. */
export async function run(): Promise<void> {
  const gatewayUrl = requiredEnv("SUPABASE_URL");
  const anonKey = requiredEnv("SUPABASE_ANON_KEY");
  const jwtSecret = requiredEnv("SUPABASE_JWT_SECRET");
  const config = loadConfig("bench");
  const sql = postgres(requiredEnv("SUPABASE_DB_URL"), { max: CONCURRENCY, onnotice: () => {} });
  try {
    const tokens = await Promise.all(Array.from({ length: TECHNICIANS }, (_, index) => signedInToken(jwtSecret, technicianId(index + 1))));
    const requests = (base: string, count: number, filtered: boolean): PreparedRequest[] => Array.from({ length: count }, (_, index) => ({
      method: "GET",
      url: `${base}/proposals?select=${SELECT}${filtered ? `&technician_id=eq.${technicianId(1 + (index % TECHNICIANS))}` : ""}&order=created_at.desc&limit=20`,
      token: tokens[index % TECHNICIANS],
      apikey: anonKey,
    }));
    const gateway = requests(`${gatewayUrl}/rest/v1`, REQUESTS, true);
    const bare = requests(`http://127.0.0.1:${config.ports.postgrest}`, REQUESTS, true);
    const unfiltered = requests(`${gatewayUrl}/rest/v1`, UNFILTERED_REQUESTS, false);

    console.log(`A technician's 20 newest proposals under RLS, ${TECHNICIANS.toLocaleString("en")} technicians, ${REQUESTS.toLocaleString("en")} requests, ${CONCURRENCY} in flight:`);
    const [{ existing }] = await sql<{ existing: number }[]>`select count(*)::int as existing from public.proposals`;
    const product = await createTechnicians(sql);
    let rows = existing;
    for (const size of SIZES) {
      await growProposals(sql, product, rows, size);
      rows = size;
      await runLoad(gateway.slice(0, 400), CONCURRENCY);
      await runLoad(bare.slice(0, 400), CONCURRENCY);
      await plainSql(sql, 400);
      const throughGateway = await runLoad(gateway, CONCURRENCY);
      const throughPostgrest = await runLoad(bare, CONCURRENCY);
      const floor = await plainSql(sql, REQUESTS);
      const rlsOnly = await runLoad(unfiltered, CONCURRENCY);
      const label = `${size.toLocaleString("en")} proposals`;
      console.log(`  ${label}: through the gateway ${describeLoad(throughGateway)}`);
      console.log(`  ${" ".repeat(label.length)}  bare PostgREST, same tokens ${describeLoad(throughPostgrest)}`);
      console.log(`  ${" ".repeat(label.length)}  plain SQL, the same query ${floor.perSecond.toFixed(0)}/s, p50 ${floor.p50.toFixed(2)} ms, p95 ${floor.p95.toFixed(2)} ms`);
      console.log(`  ${" ".repeat(label.length)}  the list with no filter (RLS alone picks the rows), ${UNFILTERED_REQUESTS} requests: ${describeLoad(rlsOnly)}`);
      if (throughGateway.statuses["200"] !== REQUESTS) throw new Error(`the data API did not answer 200 to every read: ${JSON.stringify(throughGateway.statuses)}`);
      report({
        bench: "data-api", metric: "reads under RLS (own 20 newest proposals), through the gateway", scale: `${label}, ${CONCURRENCY} in flight`,
        value: throughGateway.perSecond, unit: "req/s", higherIsBetter: true, baseline: { name: "bare PostgREST", value: throughPostgrest.perSecond },
      });
      report({
        bench: "data-api", metric: "reads under RLS, p95 through the gateway", scale: `${label}, ${CONCURRENCY} in flight`,
        value: throughGateway.p95, unit: "ms", higherIsBetter: false, baseline: { name: "plain SQL", value: floor.p95 },
      });
      report({
        bench: "data-api", metric: "the same list with no filter (RLS alone), p50", scale: `${label}, ${CONCURRENCY} in flight`,
        value: rlsOnly.p50, unit: "ms", higherIsBetter: false, baseline: { name: "with the documented filter", value: throughGateway.p50 },
      });
    }
  } finally {
    await sql.end();
  }
}
