/**
 * A live subscription's hold on its rights: when the subscriber's rights on the server change (an
 * `access` event, from any instance; one without a user stands for anyone's, see ANY_ACCESS_CHANGED)
 * and once right after it is attached (a change made while it was being set up reached no one),
 * `check` runs again; a subscriber who may no longer watch gets `revoked`, which ends the
 * subscription (src/console/iterator.ts). An event that comes while a check runs makes one more
 * check once it ends (the running one may have read the rights before the change). Console feeds
 * and the activity feed hold their rights this one way.
 */
import { RequestContext } from '@mikro-orm/core';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { ConsoleBus } from '../console/bus.js';
import { REVOKED, type ConsoleEvent } from '../console/types.js';
import { AppError } from '../errors.js';
import type { PermissionKey } from '../permissions/keys.js';
import { demand } from '../permissions/policy.js';
import type { AccessService } from './access.service.js';
import type { Actor } from './actor.js';

export async function guardedSubscription(
  orm: MikroORM,
  userId: string,
  check: () => Promise<unknown>,
  attach: (listener: (e: ConsoleEvent) => void) => Promise<() => void>,
  listener: (e: ConsoleEvent) => void,
): Promise<() => void> {
  let state: 'idle' | 'checking' | 'again' | 'revoked' = 'idle';
  const recheck = (): void => {
    if (state === 'revoked') return;
    if (state !== 'idle') {
      state = 'again';
      return;
    }
    state = 'checking';
    const settle = (revoked: boolean): void => {
      if (revoked) {
        state = 'revoked';
        return listener(REVOKED);
      }
      const more = state === 'again';
      state = 'idle';
      if (more) recheck();
    };
    // the event may come from another instance, outside any request: a context of its own
    RequestContext.create(orm.em, check).then(
      () => settle(false),
      (err: unknown) => settle(err instanceof AppError && err.status < 500),
    );
  };
  const stop = await attach((e) => {
    if (e.type !== 'access') return listener(e);
    const whose = e.data?.userId;
    if (whose === undefined || whose === userId) recheck();
  });
  recheck();
  return stop;
}

/**
 * A live hold's re-check: `userId`'s access to the server as it is now (their account read again, so an
 * administrator no longer one or a deleted account fails it) still has `key`.
 */
export function stillHolds(access: AccessService, userId: string, serverId: string, key: PermissionKey): () => Promise<void> {
  return async () => demand(await access.resolveNow(userId, serverId), key);
}

/**
 * The subscribe function of a server feed carried on the bus (its activity, its backups): it
 * attaches to the server's events for `who` once they hold `key`, and holds their rights through
 * guardedSubscription; the server's deletion (`gone` on the bus) completes it.
 */
export function guardedServerFeed(
  orm: MikroORM,
  access: AccessService,
  bus: ConsoleBus,
  who: Actor,
  serverId: string,
  key: PermissionKey,
): (push: (e: ConsoleEvent) => void) => Promise<() => void> {
  const check = stillHolds(access, who.user.id, serverId, key);
  const attach = async (push: (e: ConsoleEvent) => void) => {
    const stop = await bus.subscribe(serverId, push);
    return () => void stop().catch(() => undefined);
  };
  return (push) => guardedSubscription(orm, who.user.id, check, attach, push);
}
