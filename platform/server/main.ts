import { createServer } from "node:http";
import { serve } from "@hono/node-server";
import { createAuthService } from "../auth/app.ts";
import { loadConfig } from "../config/stack-config.ts";
import { createGateway, postgrestTarget } from "../gateway/app.ts";
import { readGatewayCredential } from "../gateway/internal-credential.ts";
import { createMailService } from "../mail/app.ts";
import { createStorageService } from "../storage/app.ts";
import { startQueueWorkers } from "../workers/queue-workers.ts";

/** A listening server. */
interface Closable {
  close(callback: () => void): unknown;
}

/**
 * The platform server process: the node half of the gateway (auth and storage in-process, and the
 * token verifier the public half asks), the mail catcher and the queue workers. The gateway's
 * public half (HAProxy), PostgREST and the functions host run as their own processes.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const auth = createAuthService(config);
  const storage = createStorageService(config);
  const mail = createMailService(config);
  const gateway = createGateway(config, { auth: auth.fetch, storage: storage.fetch, rest: postgrestTarget(`http://127.0.0.1:${config.ports.postgrest}`) }, readGatewayCredential(config));

  const gatewayServer = createServer(gateway);
  // HAProxy keeps its connections to this half open between requests and hands an idle one to the
  // next request (`http-reuse always`). Node closes a connection idle for 5 s by default; a request
  // handed one in that moment failed with the gateway's 502 ("The auth service is not reachable").
  // Only HAProxy connects here, over loopback, and it closes the idle connections it no longer needs.
  gatewayServer.keepAliveTimeout = 0;
  gatewayServer.listen(config.ports.gatewayInner, "127.0.0.1");
  const mailServer = serve({ hostname: "127.0.0.1", port: config.ports.mail, fetch: mail.fetch });
  const servers: Closable[] = [gatewayServer, mailServer];
  const workers = startQueueWorkers(config);

  const shutdown = async () => {
    await workers.stop();
    await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
    await Promise.all([auth.close(), storage.close(), mail.close()]);
    process.exit(0);
  };
  process.once("SIGTERM", shutdown);
  process.once("SIGINT", shutdown);
}

await main();
