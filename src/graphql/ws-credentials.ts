/**
 * A GraphQL connection lives as long as its credential: signing out, revoking the API token, a
 * password change that ends the session, or its expiry closes it with 4401 within 5 s (a check every
 * CREDENTIAL_RECHECK_MS, then the read), on whichever gateway instance holds it (the check reads the
 * database). An account change announced on the bus (src/services/accounts.service.ts: an
 * administrator deleted the account, set its password or took its administrator role away; the
 * account's own password change) is checked at once; a connection opened or used as an administrator
 * closes with 4403 once the account is one no longer (what it watched may have been other users'
 * servers). The connections of one credential (a dashboard's many tabs, one integration's many
 * sockets) share one check. A failed check (database unreachable) keeps them and tries again next time.
 */
import type { WebSocket } from 'ws';
import { childLogger } from '../logger.js';
import type { Actor } from '../services/actor.js';

const log = childLogger('graphql-ws');

/** Close codes: the same 4401 as the node console channel for bad credentials. */
export const WS_UNAUTHORIZED = 4401;
export const WS_FORBIDDEN = 4403;
/**
 * How often an open connection's credential is checked again. docs/api.md promises the close within
 * 5 s of a sign-out, a revoked token or a password change: a change just after one check is seen by
 * the next, so the interval plus the database read and the close frame must stay under 5 s. Every 4 s
 * leaves a second for them.
 */
export const CREDENTIAL_RECHECK_MS = 4_000;

/** One credential's watch: its account, and its sockets with whether each connected or ran an operation as an administrator. */
interface Watched {
  userId: string;
  sockets: Map<WebSocket, { admin: boolean }>;
  timer: NodeJS.Timeout;
}

/** Announces account changes (AccountsService.watch): the user id, or undefined when any account may have changed. */
type AccountChanges = (listener: (userId: string | undefined) => void) => Promise<() => Promise<void>>;

export class CredentialWatch {
  private readonly watched = new Map<string, Watched>();
  private readonly stopListening: Promise<() => Promise<void>>;

  /** `authenticate` reads a secret's actor afresh (null once it is no longer valid). */
  constructor(
    private readonly authenticate: (secret: string) => Promise<Actor | null>,
    accountChanges: AccountChanges,
  ) {
    this.stopListening = accountChanges((userId) => {
      for (const [secret, entry] of this.watched) if (userId === undefined || entry.userId === userId) this.recheck(secret);
    });
    this.stopListening.catch((err: unknown) => log.warn({ err }, 'could not listen for account changes: GraphQL connections see them at their next periodic check'));
  }

  /** Keeps `socket`, accepted with `secret` as `actor`, open only while the credential holds. */
  watch(socket: WebSocket, secret: string, actor: Actor): void {
    let entry = this.watched.get(secret);
    if (!entry) {
      const timer = setInterval(() => this.recheck(secret), CREDENTIAL_RECHECK_MS);
      timer.unref();
      entry = { userId: actor.user.id, sockets: new Map(), timer };
      this.watched.set(secret, entry);
    }
    const watched = entry;
    watched.sockets.set(socket, { admin: actor.user.role === 'admin' });
    socket.once('close', () => {
      watched.sockets.delete(socket);
      if (watched.sockets.size) return;
      clearInterval(watched.timer);
      this.watched.delete(secret);
    });
  }

  /** An operation on the socket ran as an administrator (the account may have become one after it connected). */
  actedAsAdmin(socket: WebSocket, secret: string): void {
    const opened = this.watched.get(secret)?.sockets.get(socket);
    if (opened) opened.admin = true;
  }

  async close(): Promise<void> {
    for (const entry of this.watched.values()) clearInterval(entry.timer);
    this.watched.clear();
    await this.stopListening.then((stop) => stop()).catch(() => undefined);
  }

  private recheck(secret: string): void {
    const entry = this.watched.get(secret);
    if (!entry) return;
    this.authenticate(secret).then(
      (still) => {
        for (const [socket, opened] of entry.sockets) {
          if (socket.readyState !== socket.OPEN) continue;
          if (!still) socket.close(WS_UNAUTHORIZED, 'Your credentials are no longer valid');
          else if (opened.admin && still.user.role !== 'admin') socket.close(WS_FORBIDDEN, 'Your account is no longer an administrator: connect again');
        }
      },
      (err: unknown) => log.warn({ err }, 'could not re-check a GraphQL connection\'s credential; trying again later'),
    );
  }
}
