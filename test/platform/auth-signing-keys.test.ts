/**
 * Asymmetric signing keys (`[auth] signing_keys_path`, test/fixtures/signing_keys.json in the test
 * stack): the auth service signs access tokens with the ES256 key and a `kid`, publishes the
 * public keys, and PostgREST, Storage, the gateway and the functions host accept tokens signed by
 * any published key, while the HS256 legacy keys keep working.
 */
import { createPrivateKey, generateKeyPairSync, sign, type JsonWebKey, type KeyObject } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../platform/config/stack-config.ts";
import { signHs256 } from "../../platform/keys/api-keys.ts";
import { decodeJwt, deviceClient, freshEmail } from "../helpers/auth.ts";
import { fetchFrom, simulatedClientAddress } from "../helpers/clients.ts";
import { env } from "../helpers/env.ts";

const fixtureKeys = JSON.parse(readFileSync(join(PROJECT_ROOT, "test", "fixtures", "signing_keys.json"), "utf8")) as (JsonWebKey & { kid: string; alg: string })[];

/** Signs claims with one of the fixture's private keys, as a holder of that key could. */
function signWith(alg: "ES256" | "RS256", claims: Record<string, unknown>, stranger?: { kid: string; key: KeyObject }): string {
  const jwk = fixtureKeys.find((key) => key.alg === alg)!;
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const input = `${encode({ alg, kid: stranger?.kid ?? jwk.kid, typ: "JWT" })}.${encode(claims)}`;
  const key = stranger?.key ?? createPrivateKey({ key: jwk, format: "jwk" });
  const signature = sign("sha256", Buffer.from(input), alg === "ES256" ? { key, dsaEncoding: "ieee-p1363" } : key);
  return `${input}.${signature.toString("base64url")}`;
}

async function signedInUser() {
  const email = freshEmail("keys");
  const password = "pw-Keys-12345";
  const { data, error } = await deviceClient(env.serviceRoleKey).auth.admin.createUser({ email, password, email_confirm: true });
  if (error) throw error;
  const session = (await deviceClient().auth.signInWithPassword({ email, password })).data.session!;
  return { id: data.user.id, email, session };
}

/** The answers of every service to one bearer token: the auth service, PostgREST, Storage and a verify_jwt function. */
async function answersTo(token: string) {
  const device = fetchFrom(simulatedClientAddress());
  const headers = { apikey: env.anonKey, authorization: `Bearer ${token}` };
  const [user, rest, storage, fn] = await Promise.all([
    device(`${env.url}/auth/v1/user`, { headers }),
    device(`${env.url}/rest/v1/rpc/test_caller_context`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ p_texto: "x", p_numero: 1, p_id: "00000000-0000-4000-8000-000000000000", p_doc: {} }),
    }),
    device(`${env.url}/storage/v1/bucket`, { headers }),
    device(`${env.url}/functions/v1/fixture-echo`, { headers }),
  ]);
  return { user: user.status, rest: rest.status, restBody: (await rest.json()) as Record<string, unknown>, storage: storage.status, functions: fn.status };
}

describe("asymmetric signing keys", () => {
  it("access tokens are ES256 with the signing key's kid, verifiable with the published JWKS", async () => {
    const { session, id } = await signedInUser();
    expect(decodeJwt(session.access_token, 0)).toEqual({ alg: "ES256", kid: "local-only-test-key-es256-0001", typ: "JWT" });
    const jwks = (await (await fetch(`${env.url}/auth/v1/.well-known/jwks.json`)).json()) as { keys: JsonWebKey[] };
    const { createLocalJWKSet, jwtVerify } = await import("jose");
    const { payload } = await jwtVerify(session.access_token, createLocalJWKSet({ keys: jwks.keys as never }));
    expect(payload.sub).toBe(id);
  });

  it("PostgREST, Storage, the gateway and the functions host accept the ES256 session token", async () => {
    const { session, id } = await signedInUser();
    const answers = await answersTo(session.access_token);
    expect(answers).toMatchObject({ user: 200, rest: 200, storage: 200, functions: 200 });
    expect(answers.restBody).toMatchObject({ uid: id, role: "authenticated" });
  });

  it("a token signed by the verify-only RS256 key is accepted too; one under an unknown kid or tampered is refused everywhere", async () => {
    const { id, session } = await signedInUser();
    const claims = { ...decodeJwt(session.access_token) };
    const rs256 = await answersTo(signWith("RS256", claims));
    expect(rs256).toMatchObject({ user: 200, rest: 200, storage: 200, functions: 200 });
    expect(rs256.restBody).toMatchObject({ uid: id });
    const outsider = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey;
    const unknownKid = await answersTo(signWith("ES256", claims, { kid: "some-other-key", key: outsider }));
    expect(unknownKid).toMatchObject({ user: 403, rest: 401, storage: 400, functions: 401 });
    const [header, payload] = session.access_token.split(".");
    const forgedPayload = Buffer.from(JSON.stringify({ ...claims, role: "service_role" })).toString("base64url");
    const tampered = await answersTo(`${header}.${forgedPayload}.${session.access_token.split(".")[2]}`);
    expect(tampered).toMatchObject({ user: 403, rest: 401, storage: 400, functions: 401 });
    expect(payload).toBeTruthy();
  });

  it("HS256 tokens signed with the legacy JWT secret keep working", async () => {
    const { session, id } = await signedInUser();
    const legacy = signHs256({ ...decodeJwt(session.access_token) }, env.jwtSecret);
    const answers = await answersTo(legacy);
    expect(answers).toMatchObject({ user: 200, rest: 200, storage: 200, functions: 200 });
    expect(answers.restBody).toMatchObject({ uid: id });
  });
});
