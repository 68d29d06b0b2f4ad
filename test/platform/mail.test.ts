import { randomBytes, randomUUID } from "node:crypto";
import { Resend } from "resend";
import { describe, expect, it } from "vitest";
import { serviceClient } from "../helpers/clients.ts";
import { env } from "../helpers/env.ts";

// The real `resend` client finds the catcher through RESEND_BASE_URL, as functions do.
process.env.RESEND_BASE_URL = env.mailUrl;

interface CaughtMessage {
  id: string;
  from: string;
  to: string[];
  subject: string;
  html: string | null;
  text: string | null;
  attachments: { index: number; filename: string; content_type: string; size: number }[];
}

const inbox = () => `inbox-${randomUUID()}@example.test`;

async function messagesTo(address: string): Promise<CaughtMessage[]> {
  const response = await fetch(`${env.mailUrl}/api/messages?to=${encodeURIComponent(address)}`);
  expect(response.status).toBe(200);
  return (await response.json()) as CaughtMessage[];
}

describe("mail catcher (Resend-compatible)", () => {
  it("catches a message sent with the resend client, attachment bytes included", async () => {
    const to = inbox();
    const pdf = Buffer.concat([Buffer.from("%PDF-1.4\n"), randomBytes(2048)]);
    const resend = new Resend("re_test_key");
    const { data, error } = await resend.emails.send({
      from: "Orbita <no-reply@orbita.test>",
      to: [`Customer <${to}>`],
      subject: "Your proposal",
      html: "<p>Hello <b>there</b></p>",
      text: "Hello there",
      attachments: [{ filename: "proposal.pdf", content: pdf, contentType: "application/pdf" }],
    });
    expect(error).toBeNull();
    expect(data?.id).toMatch(/^[0-9a-f-]{36}$/);

    const [listed] = await messagesTo(to);
    expect(listed).toMatchObject({ id: data!.id, subject: "Your proposal", to: [`Customer <${to}>`] });

    const full = (await (await fetch(`${env.mailUrl}/api/messages/${data!.id}`)).json()) as CaughtMessage;
    expect(full).toMatchObject({
      from: "Orbita <no-reply@orbita.test>",
      html: "<p>Hello <b>there</b></p>",
      text: "Hello there",
      attachments: [{ index: 0, filename: "proposal.pdf", content_type: "application/pdf", size: pdf.length }],
    });

    const attachment = await fetch(`${env.mailUrl}/api/messages/${data!.id}/attachments/0`);
    expect(attachment.status).toBe(200);
    expect(attachment.headers.get("content-type")).toBe("application/pdf");
    expect(Buffer.from(await attachment.arrayBuffer()).equals(pdf)).toBe(true);
  });

  it("lists messages newest first", async () => {
    const to = inbox();
    const resend = new Resend("re_test_key");
    for (const subject of ["first", "second", "third"]) {
      const { error } = await resend.emails.send({ from: "a@orbita.test", to, subject, text: subject });
      expect(error).toBeNull();
    }
    expect((await messagesTo(to)).map((message) => message.subject)).toEqual(["third", "second", "first"]);
  });

  it("catches what an edge function sends with the resend client (RESEND_BASE_URL points here)", async () => {
    const to = inbox();
    const bytes = randomBytes(300);
    const { data, error } = await serviceClient().functions.invoke("fixture-send-mail", {
      body: { to, subject: "From a function", text: "sent by Deno", attachment: { filename: "data.bin", base64: bytes.toString("base64"), contentType: "application/octet-stream" } },
    });
    expect(error).toBeNull();
    const [message] = await messagesTo(to);
    expect(message).toMatchObject({ id: data.id, subject: "From a function" });
    const attachment = await fetch(`${env.mailUrl}/api/messages/${message.id}/attachments/0`);
    expect(Buffer.from(await attachment.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it("delivers mail sent from an EdgeRuntime.waitUntil task after the function has answered", async () => {
    const to = inbox();
    const { data, error } = await serviceClient().functions.invoke("fixture-send-mail", {
      body: { to, subject: "In the background", text: "later", background: true },
    });
    expect(error).toBeNull();
    expect(data).toEqual({ queued: true });
    expect(await messagesTo(to)).toEqual([]);
    const deadline = Date.now() + 5_000;
    let caught: CaughtMessage[] = [];
    while (caught.length === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      caught = await messagesTo(to);
    }
    expect(caught.map((message) => message.subject)).toEqual(["In the background"]);
  });

  it("answers invalid input with Resend's error shape", async () => {
    const resend = new Resend("re_test_key");
    const { data, error } = await resend.emails.send({ from: "a@orbita.test", to: inbox(), subject: "no body" } as never);
    expect(data).toBeNull();
    expect(error).toMatchObject({ statusCode: 422, name: "validation_error" });

    const missingTo = await fetch(`${env.mailUrl}/emails`, {
      method: "POST",
      headers: { authorization: "Bearer re_test_key", "content-type": "application/json" },
      body: JSON.stringify({ from: "a@orbita.test", subject: "x", text: "x" }),
    });
    expect(missingTo.status).toBe(422);
    expect(await missingTo.json()).toEqual({ statusCode: 422, name: "missing_required_field", message: "Missing `to` field." });
  });

  it("requires an API key, as Resend does (any key is accepted)", async () => {
    const response = await fetch(`${env.mailUrl}/emails`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ from: "a@orbita.test", to: inbox(), subject: "x", text: "x" }),
    });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ statusCode: 401, name: "missing_api_key" });
  });

  it("deletes a message, and 404s for it afterwards", async () => {
    const to = inbox();
    const { data } = await new Resend("re_test_key").emails.send({ from: "a@orbita.test", to, subject: "bye", text: "bye" });
    expect((await fetch(`${env.mailUrl}/api/messages/${data!.id}`, { method: "DELETE" })).status).toBe(200);
    const gone = await fetch(`${env.mailUrl}/api/messages/${data!.id}`);
    expect(gone.status).toBe(404);
    expect(await gone.json()).toMatchObject({ statusCode: 404, name: "not_found" });
    expect(await messagesTo(to)).toEqual([]);
  });

  it("serves an HTML inbox at /", async () => {
    const response = await fetch(`${env.mailUrl}/`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/html");
    expect(await response.text()).toContain("/api/messages");
  });
});
