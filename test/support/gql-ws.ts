/** graphql-ws clients for the tests: a real WebSocket to a panel's /graphql, and recorded subscriptions. */
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';

export function gqlWsClient(panelUrl: string, token: string): Client {
  return createClient({
    url: panelUrl.replace(/^http/, 'ws') + '/graphql',
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    connectionParams: { authorization: `Bearer ${token}` },
  });
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
