/** graphql-ws clients for the tests: a real WebSocket to a panel's /graphql, and recorded subscriptions. */
import { createClient, type Client, type ClientOptions } from 'graphql-ws';
import WebSocket from 'ws';

/** A client of `token` on `panelUrl`'s /graphql without retries; `options` go over these defaults. */
export function gqlWsClient(panelUrl: string, token: string, options: Partial<ClientOptions> = {}): Client {
  return createClient({
    url: panelUrl.replace(/^http/, 'ws') + '/graphql',
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    connectionParams: { authorization: `Bearer ${token}` },
    ...options,
  });
}

export interface TrackedClients {
  /** A gqlWsClient, disposed by disposeAll. */
  open(panelUrl: string, token: string, options?: Partial<ClientOptions>): Client;
  /** Keeps a client made elsewhere (e.g. a raw createClient), to be disposed by disposeAll. */
  track(c: Client): Client;
  /** Disposes every client kept so far, ignoring failures of a client already gone, and forgets them. */
  disposeAll(): Promise<void>;
}

/** The graphql-ws clients of a test file, for an afterEach/afterAll to dispose all at once. */
export function trackedClients(): TrackedClients {
  const clients: Client[] = [];
  const track = (c: Client): Client => {
    clients.push(c);
    return c;
  };
  return {
    open: (panelUrl, token, options) => track(gqlWsClient(panelUrl, token, options)),
    track,
    disposeAll: async () => {
      for (const c of clients.splice(0)) await Promise.resolve(c.dispose()).catch(() => undefined);
    },
  };
}

export interface Sub {
  items: any[];
  errors: any[];
  done: boolean;
  stop: () => void;
}

/** Starts a subscription and records what it yields. */
export function subscribe(c: Client, query: string, variables: Record<string, unknown>): Sub {
  const sub: Sub = { items: [], errors: [], done: false, stop: () => undefined };
  sub.stop = c.subscribe<any>(
    { query, variables },
    {
      next: (r) => {
        if (r.errors) sub.errors.push(...r.errors);
        if (r.data) sub.items.push(r.data);
      },
      error: (e) => {
        sub.errors.push(...(Array.isArray(e) ? e : [e]));
        sub.done = true;
      },
      complete: () => (sub.done = true),
    },
  );
  return sub;
}

export const CONSOLE_LINES = 'subscription($id: ID!) { consoleOutput(serverId: $id) { line } }';
export const lineTexts = (s: Sub): string[] => s.items.map((d) => String(d.consoleOutput?.line ?? ''));
