import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { standInOutbound } from "../../../../../../test/stand-ins/outbound.ts";
import { startQdrantStandIn, type QdrantStandIn } from "../../../../../../test/stand-ins/qdrant.ts";
import { WorkflowError } from "../../core/errors.ts";
import { testRun } from "../../../../../../test/helpers/workflows/block-run.ts";
import type { VectordbInput } from "./config.ts";
import { vectordbHandler } from "./handler.ts";

let store: QdrantStandIn;
let keyed: QdrantStandIn;
beforeAll(async () => {
  store = await startQdrantStandIn();
  keyed = await startQdrantStandIn({ apiKey: "qdrant-key-0123456789" });
});
afterAll(async () => {
  await store.close();
  await keyed.close();
});

const POINTS = [
  { id: 1, vector: [1, 0, 0], payload: { city: "Recife", rank: 1 } },
  { id: 2, vector: [0.9, 0.1, 0], payload: { city: "Olinda", rank: 2 } },
  { id: "7f1c1f42-1c1a-4b7e-9a55-0d3c0a3c9b11", vector: [0, 1, 0], payload: { city: "Natal", rank: 3 } },
];

async function run(input: Partial<VectordbInput> & Pick<VectordbInput, "operation">) {
  const base = testRun<VectordbInput>({ url: store.url, collection: "places", ...input }, { deadline: Date.now() + 20_000 });
  return await vectordbHandler.execute({ ...base, services: { ...base.services, outbound: standInOutbound() } });
}

async function failure(input: Partial<VectordbInput> & Pick<VectordbInput, "operation">): Promise<WorkflowError> {
  const error = await run(input).then(
    () => null,
    (caught: unknown) => caught,
  );
  if (!(error instanceof WorkflowError)) throw new Error(`expected a WorkflowError, got ${String(error)}`);
  return error;
}

beforeEach(async () => {
  store.createCollection("places", 3);
  await run({ operation: "vectordb_upsert_points", points: POINTS });
  store.requests.length = 0;
});

describe("vectordb_upsert_points", () => {
  it("PUTs {points} to /collections/{c}/points?wait=true and answers {status, data}", async () => {
    const output = await run({ operation: "vectordb_upsert_points", points: [{ id: 9, vector: [0, 0, 1], payload: { city: "Belém" } }] });
    expect(store.requests).toEqual([{ method: "PUT", path: "/collections/places/points?wait=true", headers: expect.any(Object), body: { points: [{ id: 9, vector: [0, 0, 1], payload: { city: "Belém" } }] } }]);
    expect(output).toEqual({ status: "ok", data: { operation_id: expect.any(Number), status: "completed" } });
  });

  it("accepts points as JSON text (a reference inside text)", async () => {
    const output = await run({ operation: "vectordb_upsert_points", points: JSON.stringify([{ id: 10, vector: [1, 1, 1] }]) });
    expect(output.status).toBe("ok");
    expect((store.requests[0].body as { points: unknown[] }).points).toEqual([{ id: 10, vector: [1, 1, 1] }]);
  });

  it("refuses points without an id or a vector before calling the store", async () => {
    expect((await failure({ operation: "vectordb_upsert_points", points: [{ vector: [1, 2, 3] }] })).message).toBe('points[0] must be {id, vector, payload?} with a whole-number or UUID id (got {"vector":[1,2,3]})');
    expect((await failure({ operation: "vectordb_upsert_points" })).message).toBe("vectordb_upsert_points needs points");
    expect(store.requests).toEqual([]);
  });

  it("reports the store's own error for wrong input, without retrying", async () => {
    const error = await failure({ operation: "vectordb_upsert_points", points: [{ id: 3, vector: [1, 2] }] });
    expect(error.code).toBe("PROVIDER_ERROR");
    expect(error.message).toBe("The vector store answered 400: Wrong input: Vector dimension error: expected dim: 3, got 2");
    expect(store.requests).toHaveLength(1);
  });
});

describe("vectordb_search_vector", () => {
  it("POSTs {vector, limit, filter, with_payload, with_vector} to /points/search and answers [{id, score, payload}]", async () => {
    const output = await run({ operation: "vectordb_search_vector", vector: [1, 0, 0], limit: 2 });
    expect(store.requests.map((request) => [request.method, request.path, request.body])).toEqual([["POST", "/collections/places/points/search", { vector: [1, 0, 0], limit: 2, with_payload: true, with_vector: false }]]);
    expect(output).toEqual({
      status: "ok",
      data: [
        { id: 1, score: 1, payload: { city: "Recife", rank: 1 } },
        { id: 2, score: expect.closeTo(0.9939, 3), payload: { city: "Olinda", rank: 2 } },
      ],
    });
  });

  it("defaults to 10 results and passes the filter as it is", async () => {
    const filter = { must: [{ key: "rank", range: { gte: 2 } }], must_not: [{ key: "city", match: { value: "Natal" } }] };
    const output = await run({ operation: "vectordb_search_vector", vector: [1, 0, 0], filter });
    expect(store.requests[0].body).toEqual({ vector: [1, 0, 0], limit: 10, filter, with_payload: true, with_vector: false });
    expect((output.data as { id: unknown }[]).map((point) => point.id)).toEqual([2]);
  });

  it.each([
    ["payload_only", { with_payload: true, with_vector: false }, ["id", "score", "payload"]],
    ["vector_only", { with_payload: false, with_vector: true }, ["id", "score", "vector"]],
    ["both", { with_payload: true, with_vector: true }, ["id", "score", "payload", "vector"]],
    ["none", { with_payload: false, with_vector: false }, ["id", "score"]],
  ] as const)("search_return_data %s asks for %o and keeps %o", async (returnData, flags, keys) => {
    const output = await run({ operation: "vectordb_search_vector", vector: [0, 1, 0], limit: 1, search_return_data: returnData });
    expect(store.requests[0].body).toMatchObject(flags);
    expect(Object.keys((output.data as Record<string, unknown>[])[0])).toEqual(keys);
  });

  it("uses with_payload and with_vector when no return_data is set", async () => {
    const output = await run({ operation: "vectordb_search_vector", vector: [0, 1, 0], limit: 1, with_payload: false, with_vector: true });
    expect(store.requests[0].body).toMatchObject({ with_payload: false, with_vector: true });
    expect(output.data).toEqual([{ id: POINTS[2].id, score: 1, vector: [0, 1, 0] }]);
  });

  it("refuses a vector that is not numbers and a limit out of range", async () => {
    expect((await failure({ operation: "vectordb_search_vector", vector: ["a"] })).message).toBe("vector must be a list of numbers");
    expect((await failure({ operation: "vectordb_search_vector", vector: [1, 0, 0], limit: 0 })).message).toBe("limit must be a whole number from 1 to 1000 (got 0)");
    expect((await failure({ operation: "vectordb_search_vector", vector: [1, 0, 0], filter: "[1]" })).message).toBe('filter must be an object (got "[1]")');
  });
});

describe("vectordb_fetch_points", () => {
  it("POSTs {ids, with_payload, with_vector} to /collections/{c}/points and answers [{id, payload}]", async () => {
    const output = await run({ operation: "vectordb_fetch_points", ids: [2, POINTS[2].id, 404] });
    expect(store.requests.map((request) => [request.method, request.path, request.body])).toEqual([["POST", "/collections/places/points", { ids: [2, POINTS[2].id, 404], with_payload: true, with_vector: false }]]);
    expect(output).toEqual({ status: "ok", data: [{ id: 2, payload: { city: "Olinda", rank: 2 } }, { id: POINTS[2].id, payload: { city: "Natal", rank: 3 } }] });
  });

  it("fetch_return_data shapes the points", async () => {
    expect((await run({ operation: "vectordb_fetch_points", ids: [1], fetch_return_data: "vector_only" })).data).toEqual([{ id: 1, vector: [1, 0, 0] }]);
    expect((await run({ operation: "vectordb_fetch_points", ids: [1], fetch_return_data: "both" })).data).toEqual([{ id: 1, payload: { city: "Recife", rank: 1 }, vector: [1, 0, 0] }]);
    expect((await run({ operation: "vectordb_fetch_points", ids: [1], fetch_return_data: "none" })).data).toEqual([{ id: 1 }]);
  });

  it("refuses ids that are not point ids", async () => {
    expect((await failure({ operation: "vectordb_fetch_points", ids: [1.5] })).message).toBe("ids[0] must be a whole number or a UUID (got 1.5)");
  });
});

describe("the store's faults", () => {
  it("sends the api-key header when apiKey is set, and reports the store's 401 without it", async () => {
    keyed.createCollection("secure", 2);
    const base = { url: keyed.url, collection: "secure" };
    const ok = await run({ ...base, operation: "vectordb_upsert_points", apiKey: "qdrant-key-0123456789", points: [{ id: 1, vector: [1, 0] }] });
    expect(ok.status).toBe("ok");
    expect(keyed.requests.at(-1)?.headers["api-key"]).toBe("qdrant-key-0123456789");
    const error = await failure({ ...base, operation: "vectordb_fetch_points", ids: [1] });
    expect(error).toMatchObject({ code: "PROVIDER_ERROR", message: "The vector store answered 401: Must provide an API key or an Authorization bearer token" });
  });

  it("names a collection that does not exist", async () => {
    const error = await failure({ operation: "vectordb_fetch_points", collection: "missing", ids: [1] });
    expect(error.message).toBe("The vector store answered 404: Not found: Collection `missing` doesn't exist!");
  });

  it("retries 5xx and 429 (honouring Retry-After) and stops at the limit", async () => {
    store.failNext(503, 2);
    expect((await run({ operation: "vectordb_fetch_points", ids: [1] })).status).toBe("ok");
    expect(store.requests).toHaveLength(3);
    store.requests.length = 0;
    store.failNext(429, 1, 1);
    const started = Date.now();
    expect((await run({ operation: "vectordb_fetch_points", ids: [1] })).status).toBe("ok");
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
    store.requests.length = 0;
    store.failNext(500, 5);
    const error = await failure({ operation: "vectordb_fetch_points", ids: [1] });
    expect(error.message).toBe("The vector store answered 500: Service temporarily unavailable (after 3 attempts)");
    expect(store.requests).toHaveLength(3);
    store.failNext(0, 0);
  });

  it("reports an unreachable store and a private address the guard refuses", async () => {
    const gone = await startQdrantStandIn();
    await gone.close();
    const unreachable = await failure({ operation: "vectordb_fetch_points", url: gone.url, ids: [1] });
    expect(unreachable.code).toBe("OUTBOUND_CONNECTION");
    expect(unreachable.message).toMatch(/^The vector store could not be reached \(after 3 attempts\): could not connect to/);
    const blocked = await failure({ operation: "vectordb_fetch_points", url: "http://169.254.169.254", ids: [1] });
    expect(blocked.code).toBe("OUTBOUND_BLOCKED");
    expect(blocked.message).toBe("The vector store could not be reached: 169.254.169.254 is a link-local (cloud metadata lives here) address, which workflows may not call");
  });

  it("names the apiKey as a secret of the block", () => {
    expect(vectordbHandler.secretsOf?.({ operation: "vectordb_fetch_points", url: "x", collection: "c", apiKey: "k-1" })).toEqual(["k-1"]);
    expect(vectordbHandler.secretsOf?.({ operation: "vectordb_fetch_points", url: "x", collection: "c" })).toEqual([]);
  });
});
