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

  it("refuses a form whose Origin differs from its own in scheme or port, or is null, and writes nothing", async () => {
    const form = (name: string) => new URLSearchParams({ name, public: "yes" }).toString();
    const origins = [`https://127.0.0.1:${port}`, `https://localhost:${port}`, `http://127.0.0.1:${port + 1}`, `http://127.0.0.1`, "null"];
    for (const [index, origin] of origins.entries()) {
      const name = `csrf-origin-dashboard-${index}`;
      const forged = await send("POST", "/storage/buckets", { host: `127.0.0.1:${port}`, origin, "content-type": "application/x-www-form-urlencoded" }, form(name));
      expect({ origin, status: forged.status }).toEqual({ origin, status: 403 });
      expect(forged.text).toContain("cannot act on the local dashboard.");
    }
    expect((await sql`select id from storage.buckets where id like 'csrf-origin-dashboard-%'`).length).toBe(0);
  });

  it("takes a form from its own pages at each loopback name", async () => {
    for (const authority of [`127.0.0.1:${port}`, `localhost:${port}`]) {
      const name = `own-origin-${authority.split(":")[0].replace(/\W/g, "-")}`;
      const posted = await send("POST", "/storage/buckets", { host: authority, origin: `http://${authority}`, "content-type": "application/x-www-form-urlencoded" }, new URLSearchParams({ name }).toString());
      expect(posted.status).toBeLessThan(400);
      expect((await sql`select 1 from storage.buckets where id = ${name}`).length).toBe(1);
    }
  });
});
