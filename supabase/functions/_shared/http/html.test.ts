import { describe, expect, it } from "vitest";
import { escapeHtml } from "./html.ts";

describe("escapeHtml", () => {
  it("neutralises markup and attribute quotes", () => {
    expect(escapeHtml(`<script>alert("x")</script> & 'y'`)).toBe("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;");
  });
  it("keeps accents as they are", () => {
    expect(escapeHtml("Pão & Cia")).toBe("Pão &amp; Cia");
  });
});
