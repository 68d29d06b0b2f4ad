/** A service as the gateway sees it: a fetch-style handler for requests whose prefix is stripped. */
export type FetchHandler = (request: Request) => Promise<Response>;

/** A service the platform server hosts in-process, with a way to release its resources. */
export interface PlatformService {
  fetch: FetchHandler;
  close(): Promise<void>;
}
