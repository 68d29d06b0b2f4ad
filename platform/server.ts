import { createServer } from "node:http";
import { serve } from "@hono/node-server";
import { createAuthService } from "./auth/app.ts";
import { answerClientErrors } from "./client-errors.ts";
import { loadConfig } from "./config.ts";
import { FUNCTIONS_EGRESS_ADDRESS } from "./functions-host/host-config.ts";
import { BODY_LIMITS, createGateway } from "./gateway/app.ts";
import { TrustedProxies } from "./gateway/client-address.ts";
import { createMailService } from "./mail/app.ts";
import { createStorageService } from "./storage/app.ts";
import { loadStorageSettings } from "./storage/settings.ts";
import { startQueueWorkers } from "./workers/queue-workers.ts";

/** A listening server. */
interface Closable {
  close(callback: () => void): unknown;
}

/** Room for multipart framing around an upload of the largest allowed size. */
const MULTIPART_ALLOWANCE = 1024 * 1024;

/**
 * The platform server process: the gateway (with auth and storage in-process), the mail catcher
 * and the queue workers. PostgREST and the functions host run as their own processes.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const auth = createAuthService(config);
  const storage = createStorageService(config);
  const mail = createMailService(config);
  const gateway = createGateway(config, {
    auth: auth.fetch,
    storage: storage.fetch,
    restUrl: `http://127.0.0.1:${config.ports.postgrest}`,
    functionsUrl: `http://127.0.0.1:${config.ports.functions}`,
    pgMetaUrl: `http://127.0.0.1:${config.ports.pgMeta}`,
  }, {
    bodyLimits: { ...BODY_LIMITS, storage: loadStorageSettings().fileSizeLimit + MULTIPART_ALLOWANCE },
    trustedProxies: TrustedProxies.parse(config.trustedProxies, "ORBITA_TRUSTED_PROXIES").add(FUNCTIONS_EGRESS_ADDRESS),
  });

  const gatewayServer = createServer(gateway);
  answerClientErrors(gatewayServer);
  gatewayServer.listen(config.ports.gateway, "127.0.0.1");
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
