/**
 * Turns a hub subscription into a bounded async iterator for GraphQL subscriptions: a subscriber
 * that does not keep up is ended (with an error) instead of letting its queue grow without bound.
 */
import type { ConsoleEvent } from './types.js';

/** Per subscriber; with 500 subscribers that is at most 1M queued events in the gateway. */
export const MAX_QUEUED_EVENTS = 2_000;

export function eventIterator<T>(
  subscribe: (listener: (e: ConsoleEvent) => void) => Promise<() => void>,
  map: (e: ConsoleEvent) => T | undefined,
  maxQueued = MAX_QUEUED_EVENTS,
): AsyncIterableIterator<T> {
  const queue: T[] = [];
  let waiting: ((r: IteratorResult<T>) => void) | null = null;
  let failed: Error | null = null;
  let done = false;
  let unsubscribe: (() => void) | null = null;

  const finish = () => {
    done = true;
    unsubscribe?.();
    unsubscribe = null;
  };

  let subscribed = false;
  const ready = subscribe((e) => {
    if (done) return;
    if (e.type === 'gone') {
      // the server was deleted: the subscription completes once the queued events are out
      finish();
      waiting?.({ value: undefined, done: true });
      waiting = null;
      return;
    }
    const v = map(e);
    if (v === undefined) return;
    if (waiting) {
      const w = waiting;
      waiting = null;
      w({ value: v, done: false });
    } else if (queue.length >= maxQueued) {
      failed = new Error('The subscriber fell too far behind and was disconnected.');
      finish();
    } else queue.push(v);
  }).then((u) => {
    subscribed = true;
    if (done) u();
    else unsubscribe = u;
  });

  // `next` is called once per event and subscriber (500 viewers of a console: 500 calls per line), so
  // it creates one promise per call and no more: not an async function, no await once subscribed
  const next = (): Promise<IteratorResult<T>> => {
    if (!subscribed) return ready.then(next);
    if (queue.length) return Promise.resolve({ value: queue.shift()!, done: false });
    if (failed) return Promise.reject(failed);
    if (done) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => (waiting = resolve));
  };

  return {
    next,
    async return(): Promise<IteratorResult<T>> {
      finish();
      waiting?.({ value: undefined, done: true });
      waiting = null;
      return { value: undefined, done: true };
    },
    async throw(err?: unknown): Promise<IteratorResult<T>> {
      finish();
      throw err;
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
