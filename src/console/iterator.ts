/**
 * Turns a subscription (a console hub's, or any event source) into a bounded async iterator for
 * GraphQL subscriptions: a subscriber that does not keep up is ended (with an error) instead of
 * letting its queue grow without bound. Console events of type `gone` complete it, `revoked` ends it
 * with FORBIDDEN.
 */
import { GraphQLError } from 'graphql';
import { MAX_BATCH_EVENTS, type ConsoleEvent } from './types.js';

/**
 * Per subscriber: twice the largest batch the bus delivers at once (a burst relayed through Redis
 * must not count as falling behind). The queue holds values shared by all subscribers (one
 * conversion per event), so 500 full queues are 10M references, about 80 MB.
 */
export const MAX_QUEUED_EVENTS = 2 * MAX_BATCH_EVENTS;

/** The `extensions.code` of the error that ends a subscriber that fell behind. */
export const SUBSCRIBER_TOO_SLOW = 'SUBSCRIBER_TOO_SLOW';

/**
 * An iterator made here can also push: `iterator[PUSH](sink)` hands every value (the queued ones first)
 * straight to `sink` from then on, and `next()` only settles when the stream ends. The GraphQL gateway
 * uses it to write a subscription's events to its socket without a promise per event and subscriber
 * (src/graphql/shared-subscribe.ts); a subscriber that cannot keep up is then ended by its socket's
 * limit instead of the queue's.
 */
export const PUSH: unique symbol = Symbol('push');

export interface PushableIterator<T> extends AsyncIterableIterator<T> {
  [PUSH](sink: (value: T) => void): void;
}

export function isPushable<T>(it: unknown): it is PushableIterator<T> {
  return typeof it === 'object' && it !== null && typeof (it as { [PUSH]?: unknown })[PUSH] === 'function';
}

export function eventIterator<T, E extends object = ConsoleEvent>(
  subscribe: (listener: (e: E) => void) => Promise<() => void>,
  map: (e: E) => T | undefined,
  maxQueued = MAX_QUEUED_EVENTS,
  /** Values the subscriber gets first, before any event (e.g. the current status). */
  initial: T[] = [],
): PushableIterator<T> {
  const queue: T[] = [...initial];
  let sink: ((value: T) => void) | null = null;
  let waiting: ((r: IteratorResult<T>) => void) | null = null;
  let waitingFail: ((err: unknown) => void) | null = null;
  let failed: GraphQLError | null = null;
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
    const control = (e as { type?: unknown }).type;
    if (control === 'revoked') {
      failed = new GraphQLError('Your permission to watch this server was revoked.', { extensions: { code: 'FORBIDDEN', details: {} } });
      queue.length = 0;
      finish();
      waitingFail?.(failed);
      waiting = waitingFail = null;
      return;
    }
    if (control === 'gone') {
      // the server was deleted: the subscription completes once the queued events are out
      finish();
      waiting?.({ value: undefined, done: true });
      waiting = null;
      return;
    }
    const v = map(e);
    if (v === undefined) return;
    if (sink) sink(v);
    else if (waiting) {
      const w = waiting;
      waiting = null;
      w({ value: v, done: false });
    } else if (queue.length >= maxQueued) {
      failed = new GraphQLError(`The subscriber fell more than ${maxQueued} events behind and was ended; subscribe again.`, {
        extensions: { code: SUBSCRIBER_TOO_SLOW, details: { maxQueued } },
      });
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
    return new Promise((resolve, reject) => {
      waiting = resolve;
      waitingFail = reject;
    });
  };

  return {
    next,
    [PUSH](to: (value: T) => void): void {
      sink = to;
      while (queue.length) to(queue.shift()!);
    },
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
