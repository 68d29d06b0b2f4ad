/**
 * The dashboard acts with the service_role key, so it serves only requests addressed to this
 * machine's loopback names, and takes forms only from its own pages: another site can neither
 * post to it (CSRF) nor read it through a name resolving to 127.0.0.1 (DNS rebinding).
 */
import { request } from "node:http";
import postgres from "postgres";
import { afterAll, describe, expect, it } from "vitest";
import { env } from "../helpers/env.ts";
import { studioUrl } from "./browser.ts";

const sql = postgres(env.dbUrl, { max: 1, onnotice: () => {} });
const port = Number(new URL(studioUrl).port);

/** Sends a request with exactly these headers (fetch would not let Host be set). */
function send(method: string, path: string, headers: Record<string, string>, body = ""): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: "127.0.0.1", port, method, path, headers: { ...headers, "content-length": String(Buffer.byteLength(body)) } }, (incoming) => {
      let text = "";
      incoming.on("data", (chunk: Buffer) => (text += chunk.toString()));
      incoming.on("end", () => resolve({ status: incoming.statusCode ?? 0, text }));
    });
    outgoing.on("error", reject);
    outgoing.end(body);
  });
}

afterAll(async () => {
  await sql.end();
});

describe("the dashboard's local guard", () => {
  it("serves its loopback names and refuses any other Host", async () => {
    expect((await send("GET", "/storage", { host: `127.0.0.1:${port}` })).status).toBe(200);
    expect((await send("GET", "/storage", { host: `localhost:${port}` })).status).toBe(200);
    const rebound = await send("GET", "/storage", { host: `attacker.example:${port}` });
    expect(rebound.status).toBe(403);
    expect(rebound.text).toContain("The local dashboard answers only at 127.0.0.1");
  });

  it("refuses a form posted from another site, and writes nothing", async () => {
    const form = new URLSearchParams({ name: "csrf-bucket-dashboard", public: "yes" }).toString();
    const forged = await send("POST", "/storage/buckets", { host: `127.0.0.1:${port}`, origin: "https://attacker.example", "content-type": "application/x-www-form-urlencoded" }, form);
    expect(forged.status).toBe(403);
    expect(forged.text).toContain("A form from https://attacker.example cannot act on the local dashboard.");
    expect((await sql`select 1 from storage.buckets where id = 'csrf-bucket-dashboard'`).length).toBe(0);
  });
});
