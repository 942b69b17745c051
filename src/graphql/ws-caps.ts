/**
 * Caps on the panel's GraphQL WebSocket, so that one account or one address cannot hold the gateway's
 * sockets and memory:
 * - sockets that have not authenticated yet, per client address (refused at the upgrade with HTTP 429);
 * - authenticated sockets per user (the extra one is closed with 4429 after `connection_init`, the
 *   first moment its user is known);
 * - live operations per user over all of that user's sockets (the extra one gets a RATE_LIMITED
 *   error; the socket and its other operations stay).
 * A slot is freed when its socket closes (or, for an anonymous slot, when the socket authenticates).
 * The counts are per gateway instance.
 */
import type { WebSocket } from 'ws';

export const WS_TOO_MANY = 4429;

export interface WsLimits {
  connectionsPerUser: number;
  subscriptionsPerUser: number;
  anonymousPerAddress: number;
}

/** What a socket holds: its live operations are graphql-ws's `ctx.subscriptions` of that socket. */
interface Held {
  operations: () => number;
}

export class SocketCaps {
  private readonly anonymous = new Map<string, number>();
  private readonly byUser = new Map<string, Set<Held>>();

  constructor(readonly limits: WsLimits) {}

  /** Takes an anonymous slot for `address`; false when the address is at its cap. */
  admitAnonymous(address: string): boolean {
    const n = this.anonymous.get(address) ?? 0;
    if (n >= this.limits.anonymousPerAddress) return false;
    this.anonymous.set(address, n + 1);
    return true;
  }

  /** Frees the anonymous slot of a socket once: when it authenticates or closes, whichever comes first. */
  anonymousRelease(address: string): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const n = (this.anonymous.get(address) ?? 1) - 1;
      if (n > 0) this.anonymous.set(address, n);
      else this.anonymous.delete(address);
    };
  }

  /** Registers an authenticated socket of `userId`; false when the user is at the cap (or the socket is gone). */
  admitUser(userId: string, socket: WebSocket, operations: () => number): boolean {
    // a socket that closed while its credential was being checked would never free its slot
    if (socket.readyState !== socket.OPEN) return false;
    let held = this.byUser.get(userId);
    if (held && held.size >= this.limits.connectionsPerUser) return false;
    if (!held) this.byUser.set(userId, (held = new Set()));
    const entry: Held = { operations };
    held.add(entry);
    socket.once('close', () => {
      held.delete(entry);
      if (held.size === 0 && this.byUser.get(userId) === held) this.byUser.delete(userId);
    });
    return true;
  }

  /** True when the user's live operations (the one being started included) exceed the cap. */
  overOperations(userId: string): boolean {
    let total = 0;
    for (const h of this.byUser.get(userId) ?? []) total += h.operations();
    return total > this.limits.subscriptionsPerUser;
  }
}
