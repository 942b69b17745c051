/**
 * Talking to the panel: GraphQL over HTTP (same origin, the HTTP-only session cookie rides along) and
 * GraphQL subscriptions over graphql-ws (the cookie is sent with the WebSocket upgrade).
 */
import { createClient, type Client } from 'graphql-ws';

/** An error of the API: `code` is `extensions.code` (UNAUTHORIZED, VALIDATION_ERROR, NODE_UNAVAILABLE, …). */
export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }

  /** Per-field messages of a VALIDATION_ERROR (`details.fields`). */
  get fields(): Record<string, string> {
    const f = this.details.fields;
    return f && typeof f === 'object' ? (f as Record<string, string>) : {};
  }
}

interface GraphQLErrorShape {
  message?: string;
  extensions?: { code?: string; details?: Record<string, unknown> };
}

const UNREACHABLE = 'The node hosting this server cannot be reached right now.';

/** The refused fields of an error, `name: message` each, leaving out those that only repeat its message. */
export function fieldsText(err: ApiError): string {
  return Object.entries(err.fields)
    .filter(([, m]) => String(m) !== err.message)
    .map(([name, m]) => `${name}: ${String(m)}`)
    .join('; ');
}

/** The server's message, and the fields it refused (each named). */
function withFields(err: ApiError): string {
  const fields = fieldsText(err);
  const text = err.message || err.code;
  return fields ? `${text} ${fields}` : text;
}

/** A friendly sentence for an error, the server's message when it has one. */
export function describe(err: unknown): string {
  if (err instanceof ApiError) {
    switch (err.code) {
      case 'NETWORK':
        return err.message;
      case 'RATE_LIMITED':
        return `Too many requests. ${err.message}`;
      case 'NODE_UNAVAILABLE':
        return err.message.startsWith(UNREACHABLE) ? err.message : `${UNREACHABLE} ${err.message}`;
      case 'INTERNAL_ERROR':
        return 'Something went wrong on the panel. Please try again.';
      default:
        return withFields(err);
    }
  }
  return err instanceof Error ? err.message : String(err);
}

function fromGraphQLErrors(errors: GraphQLErrorShape[]): ApiError {
  const e = errors[0] ?? {};
  return new ApiError(e.extensions?.code ?? 'ERROR', e.message ?? 'Request failed.', e.extensions?.details ?? {});
}

/** Called when the session is found to be gone (UNAUTHORIZED); set by the app. */
let onUnauthorized: (() => void) | null = null;
export function setUnauthorizedHandler(fn: () => void): void {
  onUnauthorized = fn;
}

export async function gql<T>(query: string, variables?: Record<string, unknown>, opts: { quietAuth?: boolean } = {}): Promise<T> {
  let res: Response;
  try {
    res = await fetch('/graphql', {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ query, variables }),
    });
  } catch {
    throw new ApiError('NETWORK', 'Cannot reach the panel. Check your connection and try again.');
  }
  type Body = { data?: T; errors?: GraphQLErrorShape[] } | null;
  let body: Body = null;
  try {
    body = (await res.json()) as Body;
  } catch {
    throw new ApiError('BAD_RESPONSE', `The panel answered with HTTP ${res.status} and no readable body.`);
  }
  if (body?.errors?.length) {
    const err = fromGraphQLErrors(body.errors);
    if (err.code === 'UNAUTHORIZED' && !opts.quietAuth) onUnauthorized?.();
    throw err;
  }
  if (!res.ok || !body?.data) throw new ApiError('BAD_RESPONSE', `The panel answered with HTTP ${res.status}.`);
  return body.data;
}

// ---- subscriptions -------------------------------------------------------------------------------

let client: Client | null = null;
type ConnListener = (state: 'connecting' | 'connected' | 'closed') => void;
const connListeners = new Set<ConnListener>();

export function onConnectionState(fn: ConnListener): () => void {
  connListeners.add(fn);
  return () => connListeners.delete(fn);
}

function wsClient(): Client {
  if (client) return client;
  const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/graphql`;
  client = createClient({
    url,
    lazy: true,
    lazyCloseTimeout: 3000,
    keepAlive: 20_000,
    retryAttempts: 20,
    // credentials are the cookie of the upgrade request; 4401/4403 mean the session is gone: no retry
    shouldRetry: (e) => !(e && typeof e === 'object' && 'code' in e && [4401, 4403].includes((e as CloseEvent).code)),
    on: {
      connecting: () => connListeners.forEach((f) => f('connecting')),
      connected: () => connListeners.forEach((f) => f('connected')),
      closed: (e) => {
        connListeners.forEach((f) => f('closed'));
        if (e && typeof e === 'object' && 'code' in e && (e as CloseEvent).code === 4401) onUnauthorized?.();
      },
    },
  });
  return client;
}

/**
 * Drops the WebSocket (after sign-out, so the next one authenticates with the new cookie). A connection
 * still being made then fails (its session is gone), and graphql-ws's dispose() rejects with its close
 * event: that end is the one wanted here, not an error.
 */
export function resetLive(): void {
  const c = client;
  client = null;
  Promise.resolve(c?.dispose()).catch(() => undefined);
}

/**
 * Subscribes; `onData` gets each `data`; `onError` an ApiError. `onLive` runs each time the
 * connection that carries the subscription comes up after the call (not when it already was up):
 * a view that loads its list after subscribing loads it again then, so that nothing recorded before
 * the subscription was live, or while the connection was down, is missing. `onEnd` runs when the
 * panel ends the subscription (a server's feeds end when the server is deleted), not when it is
 * unsubscribed. Returns the unsubscribe function.
 */
export function subscribe<T>(query: string, variables: Record<string, unknown>, onData: (data: T) => void, onError?: (err: ApiError) => void, onLive?: () => void, onEnd?: () => void): () => void {
  const stop = subscribeRaw<T>(query, variables, onData, onError, onEnd);
  if (!onLive) return stop;
  const off = onConnectionState((state) => state === 'connected' && onLive());
  return () => {
    off();
    stop();
  };
}

function subscribeRaw<T>(query: string, variables: Record<string, unknown>, onData: (data: T) => void, onError?: (err: ApiError) => void, onEnd?: () => void): () => void {
  // graphql-ws completes the sink on an unsubscribe too: only the panel's own end is passed on
  let unsubscribed = false;
  const stop = wsClient().subscribe<T>(
    { query, variables },
    {
      next: (r) => {
        if (r.errors?.length) onError?.(fromGraphQLErrors(r.errors as GraphQLErrorShape[]));
        else if (r.data) onData(r.data as T);
      },
      error: (e) => {
        if (Array.isArray(e)) onError?.(fromGraphQLErrors(e as GraphQLErrorShape[]));
        else if (e && typeof e === 'object' && 'code' in e && typeof (e as CloseEvent).code === 'number') {
          const ce = e as CloseEvent;
          onError?.(new ApiError(ce.code === 4401 ? 'UNAUTHORIZED' : 'NETWORK', ce.code === 4401 ? 'Your session has ended. Please sign in again.' : 'Live updates were disconnected.'));
        } else onError?.(new ApiError('NETWORK', 'Live updates are unavailable: cannot reach the panel.'));
      },
      complete: () => {
        if (!unsubscribed) onEnd?.();
      },
    },
  );
  return () => {
    unsubscribed = true;
    stop();
  };
}
