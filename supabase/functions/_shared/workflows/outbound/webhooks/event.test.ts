import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { type ClaimedDelivery, EVENT_TYPE, eventBody, eventHeaders } from "./event.ts";

const delivery: ClaimedDelivery = {
  deliveryId: "0d6c7a43-6f0e-4a77-9d8f-3f0f2b1c4a5e",
  attempt: 3,
  roundAttempt: 1,
  dueAt: "2026-11-23T10:00:00.000000+00:00",
  url: "https://hooks.example.com/orbita",
  secret: "subscriber-secret",
  data: { workflowId: "w", executionId: "e", status: "success", level: "info", trigger: "api", cost: { total: 0.001 }, files: null },
  links: { log: "/api/v1/logs/e", execution: "/api/v1/logs/executions/e" },
};

describe("the completion event", () => {
  it("carries the delivery id as its id, the type, the attempt's timestamp, the data and the links", () => {
    const body = JSON.parse(new TextDecoder().decode(eventBody(delivery, 1_700_000_000_000)));
    expect(body).toEqual({ id: delivery.deliveryId, type: EVENT_TYPE, timestamp: 1_700_000_000_000, data: delivery.data, links: delivery.links });
  });

  it("sends the spec's headers, with the same delivery id as Idempotency-Key, signed over the body's bytes", async () => {
    const body = eventBody(delivery, 1_700_000_000_000);
    const headers = await eventHeaders(delivery, 1_700_000_000_000, body);
    const digest = createHmac("sha256", "subscriber-secret").update(Buffer.concat([Buffer.from("1700000000000."), Buffer.from(body)])).digest("hex");
    expect(headers).toEqual({
      "content-type": "application/json",
      "user-agent": "orbita-webhooks/1",
      "service-event": "workflow.execution.completed",
      "service-timestamp": "1700000000000",
      "service-delivery-id": delivery.deliveryId,
      "idempotency-key": delivery.deliveryId,
      "service-signature": `t=1700000000000,v1=${digest}`,
    });
  });

  it("leaves the signature out without a secret", async () => {
    const unsigned = { ...delivery, secret: null };
    const headers = await eventHeaders(unsigned, 5, eventBody(unsigned, 5));
    expect(headers).not.toHaveProperty("service-signature");
    expect(headers["service-timestamp"]).toBe("5");
  });
});
