/**
 * Loaded into the postgres-meta process before its server (`node --import`): every request that
 * does not carry the gateway's credential is answered 401 in pg-meta's own error shape (`{error}`)
 * before pg-meta sees it. pg-meta is the published npm package, which has no setting for this, and
 * it builds its servers (the API and the metrics app on the next port) with fastify, which calls
 * `http.createServer(options, handler)`; wrapping that handler is the one place every request
 * passes. The gateway adds the credential on /pg/ (after its own service_role check), so Studio's
 * route works as before, while a direct call to pg-meta's port (a workflow, a browser page) cannot
 * run SQL as `postgres`.
 */
import http, { type IncomingMessage, type RequestListener, type ServerResponse } from "node:http";
import { carriesGatewayCredential, GATEWAY_CREDENTIAL_HEADER, GATEWAY_CREDENTIAL_VARIABLE } from "../gateway/internal-credential.ts";

const credential = process.env[GATEWAY_CREDENTIAL_VARIABLE] ?? "";
// Refusing to start beats serving without the check.
if (credential === "") throw new Error(`${GATEWAY_CREDENTIAL_VARIABLE} is not set; postgres-meta will not start without the gateway's credential`);

const REFUSAL = JSON.stringify({ error: "Unauthorized: postgres-meta answers only the API gateway; call /pg/ on the gateway with the service_role key" });

function guarded(listener: RequestListener): RequestListener {
  return (request: IncomingMessage, response: ServerResponse) => {
    if (carriesGatewayCredential(request.headers[GATEWAY_CREDENTIAL_HEADER], credential)) {
      delete request.headers[GATEWAY_CREDENTIAL_HEADER];
      listener(request, response);
      return;
    }
    response.writeHead(401, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(REFUSAL) }).end(REFUSAL);
  };
}

const createServer = http.createServer;
(http as { createServer: (...args: unknown[]) => http.Server }).createServer = (...args: unknown[]) =>
  (createServer as (...args: unknown[]) => http.Server)(...args.map((arg) => (typeof arg === "function" ? guarded(arg as RequestListener) : arg)));
