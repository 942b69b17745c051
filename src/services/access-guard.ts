/**
 * A live subscription's hold on its rights: when the subscriber's rights on the server change (an
 * `access` event, from any instance) and once right after it is attached (a change made while it
 * was being set up reached no one), `check` runs again; a subscriber who may no longer watch gets
 * `revoked`, which ends the subscription (src/console/iterator.ts). Console feeds and the activity
 * feed hold their rights this one way.
 */
import { RequestContext } from '@mikro-orm/core';
import type { MikroORM } from '@mikro-orm/postgresql';
import { REVOKED, type ConsoleEvent } from '../console/types.js';
import { AppError } from '../errors.js';

export async function guardedSubscription(
  orm: MikroORM,
  userId: string,
  check: () => Promise<unknown>,
  attach: (listener: (e: ConsoleEvent) => void) => Promise<() => void>,
  listener: (e: ConsoleEvent) => void,
): Promise<() => void> {
  let checking = false;
  const recheck = (): void => {
    if (checking) return;
    checking = true;
    // the event may come from another instance, outside any request: a context of its own
    RequestContext.create(orm.em, check).then(
      () => (checking = false),
      (err: unknown) => {
        checking = false;
        if (err instanceof AppError && err.status < 500) listener(REVOKED);
      },
    );
  };
  const stop = await attach((e) => {
    if (e.type !== 'access') return listener(e);
    if (e.data?.userId === userId) recheck();
  });
  recheck();
  return stop;
}
