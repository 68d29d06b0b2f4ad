import { describe, expect, it } from "vitest";
import { checkedHeaders } from "./headers.ts";

describe("Response headers (RFC 9110)", () => {
  it("pass names that are tokens and values HTTP can carry, written as text", () => {
    expect(checkedHeaders({ "X-Count": 3, "Cache-Control": "no-store, max-age=0", "X-Empty": "", "X-Latin": "café", "x!#$%&'*+-.^_`|~": "a\tb" })).toEqual({
      "X-Count": "3",
      "Cache-Control": "no-store, max-age=0",
      "X-Empty": "",
      "X-Latin": "café",
      "x!#$%&'*+-.^_`|~": "a\tb",
    });
  });

  it("refuse names that are not tokens", () => {
    for (const name of ["Bad Header\n", "X Space", "", "X:Colon", "Ünïcode", "X\u0000"]) {
      expect(() => checkedHeaders({ [name]: "v" })).toThrow("is not a valid HTTP field name");
    }
  });

  it("refuse values with line breaks, NUL, controls, text outside Latin-1, or spaces at either end", () => {
    for (const value of ["a\r\nSet-Cookie: x=1", "a\nb", "nul\u0000", "bell\u0007", "emoji 🙂", " padded", "padded "]) {
      expect(() => checkedHeaders({ "X-Value": value })).toThrow('header "X-Value" has a value HTTP cannot carry');
    }
  });

  it("refuse the same header twice in different case, and headers the server owns", () => {
    expect(() => checkedHeaders({ "X-Id": "1", "x-id": "2" })).toThrow('headers "X-Id" and "x-id" are the same header');
    expect(() => checkedHeaders({ "Content-Length": "5" })).toThrow('header "Content-Length" is set by the server');
    expect(() => checkedHeaders({ "Transfer-Encoding": "chunked" })).toThrow("is set by the server");
  });
});
