/**
 * How the functions host carries bodies between its clients and a function's worker (over the
 * worker's message channel, runtime/exchange.ts and runtime/channel-server.ts): streamed responses
 * chunk by chunk, backpressure from a client that stops reading, the client going away, uploads
 * whole and streamed, and the answers without a body (test/fixtures/functions/fixture-stream).
 */
import { request as httpRequest } from "node:http";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../platform/config/stack-config.ts";
import { env } from "../helpers/env.ts";
import { until } from "../helpers/until.ts";

// Straight to the host where the gateway's own buffering would blur what the host does.
const host = `http://127.0.0.1:${loadConfig("test").ports.functions}/fixture-stream`;
const viaGateway = `${env.url}/functions/v1/fixture-stream`;

interface Status {
  bootId: string;
  produced?: number;
  aborted?: boolean;
  cancelled?: boolean;
}

async function status(key: string): Promise<Status> {
  return (await (await fetch(`${host}?mode=status&key=${key}`)).json()) as Status;
}

async function firstChunk(response: Response): Promise<{ text: string; reader: ReadableStreamDefaultReader<Uint8Array> }> {
  const reader = response.body!.getReader();
  const { value } = await reader.read();
  return { text: new TextDecoder().decode(value), reader };
}

describe("streamed responses", () => {
  it("delivers an SSE event while the stream is still open, and the function sees the client go away", async () => {
    const key = crypto.randomUUID();
    const controller = new AbortController();
    const response = await fetch(`${viaGateway}?mode=sse&key=${key}`, { signal: controller.signal });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const { text } = await firstChunk(response);
    expect(text).toBe("data: first\n\n");
    controller.abort();
    await until("the function to see its client go", async () => {
      const seen = await status(key);
      return seen.aborted === true && seen.cancelled === true;
    }, 10_000);
  });

  it("stops taking from a function's stream while the client does not read, and resumes when it does", async () => {
    const key = crypto.randomUUID();
    const response = await fetch(`${host}?mode=firehose&key=${key}`);
    const reader = response.body!.getReader();
    await reader.read();
    // The client now reads nothing: what the function produced must stop growing (socket buffers,
    // the host's window and the client's own buffer fill), far below what a host that buffered
    // without bound would have taken by then.
    let last = -1;
    await until("the function's stream to stall", async () => {
      const { produced = 0 } = await status(key);
      const stalled = produced === last;
      last = produced;
      return stalled;
    }, 20_000, 500);
    expect(last).toBeLessThan(64 * 1024 * 1024);
    let taken = 0;
    while (taken < last + 4 * 1024 * 1024) taken += (await reader.read()).value?.byteLength ?? 0;
    expect((await status(key)).produced).toBeGreaterThan(last);
    await reader.cancel();
    await until("the function's stream to be cancelled", async () => (await status(key)).cancelled === true, 10_000);
  });

  it("sends a body larger than one message whole and in order", async () => {
    const response = await fetch(`${host}?mode=large&tens=300000`);
    const text = await response.text();
    expect(text.length).toBe(3_000_000);
    expect(text).toBe("0123456789".repeat(300_000));
  });

  it("cuts the client off when a function's stream fails midway", async () => {
    const response = await fetch(`${host}?mode=broken-later`);
    expect(response.status).toBe(200);
    await expect(response.text()).rejects.toThrow();
  });

  it("answers 500 WORKER_ERROR when a function's stream fails before its first byte, and the worker stays", async () => {
    const before = await status("none");
    const response = await fetch(`${host}?mode=broken-at-once`);
    expect(response.status).toBe(500);
    expect(await response.json()).toMatchObject({ code: "WORKER_ERROR" });
    expect((await status("none")).bootId).toBe(before.bootId);
  });
});

describe("requests and answers the worker cannot serve fail alone", () => {
  it("answers 500 WORKER_ERROR for Response.error() and for a TRACE request, and the worker stays", async () => {
    const before = await status("none");
    const errorResponse = await fetch(`${host}?mode=response-error`);
    expect(errorResponse.status).toBe(500);
    expect(await errorResponse.json()).toMatchObject({ code: "WORKER_ERROR" });
    // fetch refuses to send TRACE; node:http does not (a Request cannot be built with it).
    const traced = await new Promise<number>((resolve, reject) => {
      const outgoing = httpRequest(`${host}?mode=echo`, { method: "TRACE" }, (response) => {
        response.resume();
        response.on("end", () => resolve(response.statusCode ?? 0));
      });
      outgoing.on("error", reject);
      outgoing.end();
    });
    expect(traced).toBe(500);
    expect((await status("none")).bootId).toBe(before.bootId);
  });
});

describe("request bodies", () => {
  const bytes = (size: number) => Uint8Array.from({ length: size }, (_, index) => (index * 31) % 251);
  const sumOf = (data: Uint8Array) => data.reduce((sum, byte) => (sum + byte) % 1_000_000_007, 0);

  it("hands the function a small body and a large one (streamed) byte for byte", async () => {
    for (const size of [0, 10, 3 * 1024 * 1024]) {
      const body = bytes(size);
      const response = await fetch(`${host}?mode=upload`, { method: "POST", body });
      expect(await response.json()).toEqual({ bytes: size, sum: sumOf(body) });
    }
  });

  it("hands the function a chunked upload of unknown length", async () => {
    const parts = [bytes(100_000), bytes(700_000), bytes(5)];
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const part of parts) controller.enqueue(part);
        controller.close();
      },
    });
    const response = await fetch(`${host}?mode=upload`, { method: "POST", body: stream, duplex: "half" } as RequestInit);
    const all = Buffer.concat(parts);
    expect(await response.json()).toEqual({ bytes: all.length, sum: sumOf(all) });
  });

  it("lets a client still sending a body the function refused finish, and read the refusal", async () => {
    // 24 MiB in 256 KiB writes, each after the last one drained: the function has answered long
    // before the client is done, as with a body over a function's cap on a slow link.
    const chunk = bytes(256 * 1024);
    const chunks = 96;
    const outcome = await new Promise<{ status: number; body: string; written: number }>((resolve, reject) => {
      let written = 0;
      const request = httpRequest(`${host}?mode=refuse-upload`, {
        method: "POST", headers: { "content-type": "application/octet-stream", "content-length": String(chunk.length * chunks) },
      }, (response) => {
        let body = "";
        response.on("data", (data: Buffer) => (body += data.toString()));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body, written }));
      });
      request.on("error", reject);
      const writeNext = () => {
        if (written === chunks) return void request.end();
        written += 1;
        if (request.write(chunk)) setImmediate(writeNext);
        else request.once("drain", writeNext);
      };
      writeNext();
    });
    expect(outcome).toEqual({ status: 413, body: JSON.stringify({ code: "BODY_TOO_LARGE" }), written: chunks });
  });
});

describe("answers without a body, and repeated headers", () => {
  it("passes a 204 with its headers and a HEAD answer without a body", async () => {
    const empty = await fetch(`${host}?mode=empty`);
    expect(empty.status).toBe(204);
    expect(empty.headers.get("x-empty")).toBe("yes");
    expect(await empty.text()).toBe("");
    const head = await fetch(`${host}?mode=large&tens=10`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
  });

  it("keeps every Set-Cookie header", async () => {
    const response = await fetch(`${host}?mode=cookies`);
    expect(response.headers.getSetCookie()).toEqual(["a=1; Path=/", "b=2; Path=/"]);
  });
});
