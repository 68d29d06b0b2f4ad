/**
 * A small Qdrant speaking its REST API faithfully enough for the vector tools: collections in
 * memory (`PUT /collections/{c}` with `vectors {size, distance}`), upsert
 * (`PUT /collections/{c}/points`), search (`POST /collections/{c}/points/search`, Cosine or Dot,
 * `filter` with must / should / must_not of `match {value | any}` and `range`), fetch by id
 * (`POST /collections/{c}/points`), the `api-key` header when a key is set, and Qdrant's answers:
 * `{result, status: "ok", time}`, errors `{status: {error}, time}` (404 unknown collection, 400
 * wrong input, 401 without the key). `failNext` makes the next calls fail (5xx, 429 with
 * Retry-After) to exercise retries; `requests` records every call.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

type Distance = "Cosine" | "Dot";
interface StoredPoint {
  id: number | string;
  vector: number[];
  payload: Record<string, unknown>;
  version: number;
}
interface Collection {
  size: number;
  distance: Distance;
  points: Map<string, StoredPoint>;
}

/** One call as the store received it. */
export interface QdrantRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

/** A running stand-in. */
export interface QdrantStandIn {
  url: string;
  requests: QdrantRequest[];
  /** Creates (or empties) a collection. */
  createCollection(name: string, size: number, distance?: Distance): void;
  /** The next `times` calls answer `status` (with Retry-After seconds when given). */
  failNext(status: number, times: number, retryAfter?: number): void;
  close(): Promise<void>;
}

function similarity(distance: Distance, a: number[], b: number[]): number {
  const dot = a.reduce((sum, value, index) => sum + value * b[index], 0);
  if (distance === "Dot") return dot;
  const norm = (v: number[]) => Math.sqrt(v.reduce((sum, value) => sum + value * value, 0));
  return dot / (norm(a) * norm(b));
}

type Condition = { key: string; match?: { value?: unknown; any?: unknown[] }; range?: { gt?: number; gte?: number; lt?: number; lte?: number } };

function holds(condition: Condition, payload: Record<string, unknown>): boolean {
  const value = condition.key.split(".").reduce<unknown>((current, part) => (current as Record<string, unknown> | undefined)?.[part], payload);
  if (condition.match) {
    if ("any" in condition.match) return (condition.match.any ?? []).includes(value);
    return value === condition.match.value;
  }
  if (condition.range && typeof value === "number") {
    const { gt, gte, lt, lte } = condition.range;
    return (gt === undefined || value > gt) && (gte === undefined || value >= gte) && (lt === undefined || value < lt) && (lte === undefined || value <= lte);
  }
  return false;
}

function matches(filter: { must?: Condition[]; should?: Condition[]; must_not?: Condition[] } | undefined, payload: Record<string, unknown>): boolean {
  if (!filter) return true;
  if (filter.must && !filter.must.every((condition) => holds(condition, payload))) return false;
  if (filter.should && filter.should.length > 0 && !filter.should.some((condition) => holds(condition, payload))) return false;
  if (filter.must_not && filter.must_not.some((condition) => holds(condition, payload))) return false;
  return true;
}

function shape(point: StoredPoint, withPayload: unknown, withVector: unknown, score?: number): Record<string, unknown> {
  const out: Record<string, unknown> = { id: point.id, version: point.version };
  if (score !== undefined) out.score = score;
  out.payload = withPayload === true ? point.payload : null;
  out.vector = withVector === true ? point.vector : null;
  return out;
}

/** Starts the stand-in on a free port of 127.0.0.1; with `apiKey`, every call must send it. */
export async function startQdrantStandIn(options: { apiKey?: string } = {}): Promise<QdrantStandIn> {
  const collections = new Map<string, Collection>();
  const requests: QdrantRequest[] = [];
  const failures: { status: number; retryAfter?: number }[] = [];
  let operation = 0;
  const started = performance.now();
  const send = (response: import("node:http").ServerResponse, status: number, body: Record<string, unknown>, headers: Record<string, string> = {}) => {
    response.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify({ ...body, time: (performance.now() - started) / 1e6 }));
  };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      let body: Record<string, unknown> = {};
      const url = new URL(request.url ?? "/", "http://qdrant");
      try {
        body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
      } catch (error) {
        requests.push({ method: request.method ?? "", path: url.pathname + url.search, headers: request.headers, body: raw });
        return send(response, 400, { status: { error: `Json deserialize error: ${(error as Error).message}` } });
      }
      requests.push({ method: request.method ?? "", path: url.pathname + url.search, headers: request.headers, body });
      if (options.apiKey !== undefined && request.headers["api-key"] !== options.apiKey) return send(response, 401, { status: { error: "Must provide an API key or an Authorization bearer token" } });
      const failure = failures.shift();
      if (failure) return send(response, failure.status, { status: { error: "Service temporarily unavailable" } }, failure.retryAfter !== undefined ? { "retry-after": String(failure.retryAfter) } : {});
      const match = /^\/collections\/([^/]+)(\/points(\/search)?)?$/.exec(url.pathname);
      if (!match) return send(response, 404, { status: { error: `Not found: ${url.pathname}` } });
      const name = decodeURIComponent(match[1]);
      if (!match[2] && request.method === "PUT") {
        const vectors = body.vectors as { size: number; distance: Distance };
        collections.set(name, { size: vectors.size, distance: vectors.distance, points: new Map() });
        return send(response, 200, { result: true, status: "ok" });
      }
      const collection = collections.get(name);
      if (!collection) return send(response, 404, { status: { error: `Not found: Collection \`${name}\` doesn't exist!` } });
      if (match[3] && request.method === "POST") {
        const vector = body.vector as number[];
        if (!Array.isArray(vector) || vector.length !== collection.size) return send(response, 400, { status: { error: `Wrong input: Vector dimension error: expected dim: ${collection.size}, got ${Array.isArray(vector) ? vector.length : 0}` } });
        const limit = typeof body.limit === "number" ? body.limit : 10;
        const hits = [...collection.points.values()]
          .filter((point) => matches(body.filter as never, point.payload))
          .map((point) => ({ point, score: similarity(collection.distance, vector, point.vector) }))
          .sort((a, b) => b.score - a.score)
          .slice(0, limit)
          .map(({ point, score }) => shape(point, body.with_payload, body.with_vector, score));
        return send(response, 200, { result: hits, status: "ok" });
      }
      if (match[2] && request.method === "PUT") {
        const points = body.points as { id: number | string; vector: number[]; payload?: Record<string, unknown> }[];
        if (!Array.isArray(points)) return send(response, 400, { status: { error: "Json deserialize error: missing field `points`" } });
        for (const point of points) {
          if (!Array.isArray(point.vector) || point.vector.length !== collection.size) return send(response, 400, { status: { error: `Wrong input: Vector dimension error: expected dim: ${collection.size}, got ${Array.isArray(point.vector) ? point.vector.length : 0}` } });
        }
        operation++;
        for (const point of points) collection.points.set(String(point.id), { id: point.id, vector: point.vector, payload: point.payload ?? {}, version: operation });
        return send(response, 200, { result: { operation_id: operation, status: "completed" }, status: "ok" });
      }
      if (match[2] && request.method === "POST") {
        const ids = body.ids as (number | string)[];
        if (!Array.isArray(ids)) return send(response, 400, { status: { error: "Json deserialize error: missing field `ids`" } });
        const found = ids.flatMap((id) => {
          const point = collection.points.get(String(id));
          return point ? [shape(point, body.with_payload, body.with_vector)] : [];
        });
        return send(response, 200, { result: found, status: "ok" });
      }
      return send(response, 404, { status: { error: `Not found: ${request.method} ${url.pathname}` } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    createCollection: (name, size, distance = "Cosine") => collections.set(name, { size, distance, points: new Map() }),
    failNext: (status, times, retryAfter) => {
      for (let i = 0; i < times; i++) failures.push({ status, ...(retryAfter !== undefined ? { retryAfter } : {}) });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
