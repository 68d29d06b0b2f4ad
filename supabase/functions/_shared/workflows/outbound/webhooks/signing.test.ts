import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { signatureHeader, signedContent } from "./signing.ts";

const encode = (text: string) => new TextEncoder().encode(text);

describe("webhook signatures", () => {
  it("is t=<timestamp>,v1=<hex HMAC-SHA256 of '<timestamp>.<body>'> (a fixed vector)", async () => {
    // Computed once with `printf '1700000000000.{"id":"d1"}' | openssl dgst -sha256 -hmac whsec-test-secret`.
    expect(await signatureHeader("whsec-test-secret", 1_700_000_000_000, encode('{"id":"d1"}'))).toBe(
      "t=1700000000000,v1=b88f6e1fb963c5d375f552da646f8e3d177d599d33e053da9262dae03873154f",
    );
  });

  it("signs the exact bytes, multi-byte characters included, as an independent HMAC does", async () => {
    const body = encode(JSON.stringify({ name: "São Paulo ☕", nested: { list: [1, 2.5, null] } }));
    const header = await signatureHeader("another secret", 1_800_000_000_123, body);
    const expected = createHmac("sha256", "another secret").update(Buffer.concat([Buffer.from("1800000000123."), Buffer.from(body)])).digest("hex");
    expect(header).toBe(`t=1800000000123,v1=${expected}`);
  });

  it("changes with the secret, the timestamp and every byte of the body", async () => {
    const body = encode('{"a":1}');
    const base = await signatureHeader("secret-one", 1, body);
    expect(await signatureHeader("secret-two", 1, body)).not.toBe(base);
    expect((await signatureHeader("secret-one", 2, body)).split(",v1=")[1]).not.toBe(base.split(",v1=")[1]);
    expect(await signatureHeader("secret-one", 1, encode('{"a":2}'))).not.toBe(base);
    expect(await signatureHeader("secret-one", 1, encode('{"a": 1}'))).not.toBe(base);
  });

  it("puts the timestamp and a dot before the body", () => {
    expect(new TextDecoder().decode(signedContent(42, encode("{}")))).toBe("42.{}");
  });
});
