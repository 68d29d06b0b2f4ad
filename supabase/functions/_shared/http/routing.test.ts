import { Hono } from "hono";
import { describe, expect, it, vi } from "vitest";
import { HttpError, type Problem, type ServiceErrors } from "./errors.ts";
import { createLogger } from "./logger.ts";
import { createRouter, serveEndpoint } from "./routing.ts";

const errors: ServiceErrors = {
  describe: (problem: Problem) => new HttpError(problem.kind === "not_found" ? 404 : problem.kind === "method_not_allowed" ? 405 : 500, problem.kind, "said"),
  render: (error) => Response.json({ code: error.code, message: error.message }, { status: error.status, headers: error.headers }),
};
const lines: string[] = [];
const logger = createLogger("test", {}, (_level, line) => lines.push(line));

const router = createRouter(
  [
    { method: "GET", path: "/items/:id", handle: (c) => c.json({ id: c.req.param("id") }) },
    { method: "POST", path: "/items", handle: () => new Response("created", { status: 201 }) },
    { method: "GET", path: "/items", handle: () => Response.json([]) },
    { method: "GET", path: "/fails", handle: () => { throw new HttpError(409, "conflict", "taken"); } },
    { method: "GET", path: "/breaks", handle: () => { throw new Error("secret database detail"); } },
  ],
  { errors, logger },
);
const app = new Hono({ strict: false }).route("/api/v1/things", router);
const fetchApp = (path: string, method = "GET") => app.fetch(new Request(`http://local/api/v1/things${path}`, { method }));

describe("createRouter", () => {
  it("serves routes under the mount prefix, path values decoded, trailing slash ignored", async () => {
    expect(await (await fetchApp("/items/a%20b")).json()).toEqual({ id: "a b" });
    expect((await fetchApp("/items/", "POST")).status).toBe(201);
  });

  it("answers the service's 405 with Allow listing every method of the path", async () => {
    const response = await fetchApp("/items", "DELETE");
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("POST, GET");
    expect((await fetchApp("/items/1", "PUT")).headers.get("allow")).toBe("GET");
  });

  it("answers the service's 404 for unknown paths and for malformed escapes", async () => {
    expect(await (await fetchApp("/nothing")).json()).toEqual({ code: "not_found", message: "said" });
    expect((await fetchApp("/items/%E0%A4%A")).status).toBe(404);
  });

  it("renders a thrown HttpError, and logs and hides anything else", async () => {
    expect(await (await fetchApp("/fails")).json()).toEqual({ code: "conflict", message: "taken" });
    lines.length = 0;
    const broken = await fetchApp("/breaks");
    expect(broken.status).toBe(500);
    expect(await broken.text()).not.toContain("secret database detail");
    expect(JSON.parse(lines[0])).toMatchObject({ level: "error", message: "unhandled_error", path: "/api/v1/things/breaks", error: { message: "secret database detail" } });
  });
});

describe("serveEndpoint", () => {
  const handle = vi.fn(async () => new Response("ok"));
  const endpoint = serveEndpoint({ methods: ["GET", "POST"], errors, logger, preflightHeaders: { "access-control-allow-origin": "*" }, handle });

  it("serves its methods, answers preflights and refuses the rest with Allow", async () => {
    expect(await (await endpoint(new Request("http://local/fn"))).text()).toBe("ok");
    const preflight = await endpoint(new Request("http://local/fn", { method: "OPTIONS" }));
    expect([preflight.status, preflight.headers.get("access-control-allow-origin")]).toEqual([204, "*"]);
    const refused = await endpoint(new Request("http://local/fn", { method: "DELETE" }));
    expect([refused.status, refused.headers.get("allow")]).toEqual([405, "GET, POST"]);
  });

  it("answers OPTIONS like any other method without preflight headers", async () => {
    const plain = serveEndpoint({ methods: ["GET"], errors, logger, handle });
    expect((await plain(new Request("http://local/fn", { method: "OPTIONS" }))).status).toBe(405);
  });
});
