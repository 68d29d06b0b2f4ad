import { describe, expect, it } from "vitest";
import { chatCodeEmail } from "./chat-code-mail.ts";

describe("the chat code e-mail", () => {
  it("carries the code and the chat's name, escaped in HTML", () => {
    const email = chatCodeEmail({ email: "ana@example.com", code: "042917", title: "Help & <Support>", expiresAt: "2030-01-01T10:15:00Z" });
    expect(email.subject).toBe("042917 is your code for Help & <Support>");
    expect(email.text).toContain("042917");
    expect(email.html).toContain("Help &amp; &lt;Support&gt;");
    expect(email.html).toContain("<strong>042917</strong>");
  });
});
