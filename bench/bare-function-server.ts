/// <reference lib="deno.ns" />
/**
 * The functions bench's baseline (runs under Deno, not the functions host): one edge function
 * served by a bare `Deno.serve` on BARE_FUNCTION_PORT, with nothing in front of it — no gateway,
 * no host, no worker. The function's module is imported unchanged; its own `Deno.serve` call is
 * pointed at the bench's port.
 */
const port = Number(Deno.env.get("BARE_FUNCTION_PORT"));
const entrypoint = Deno.env.get("BARE_FUNCTION_ENTRYPOINT");
if (!Number.isInteger(port) || !entrypoint) throw new Error("BARE_FUNCTION_PORT and BARE_FUNCTION_ENTRYPOINT must be set");

const serve = Deno.serve.bind(Deno);
(Deno as { serve: unknown }).serve = (...args: unknown[]) => {
  const handler = (typeof args[0] === "function" ? args[0] : args[1]) as Deno.ServeHandler;
  return serve({ hostname: "127.0.0.1", port, onListen: () => console.log("listening") }, handler);
};
await import(entrypoint);
