/**
 * graphql-js executes a subscription's selection set once per event and per subscriber. Console
 * subscribers of one server all receive the same event object from the console hub (one upstream
 * feed, one conversion per event), so 500 viewers of a console would cost 500 identical executions
 * of `consoleOutput { line ts }` per line. Here each event is executed once per distinct operation
 * (same text, operation name and variables) and the result is shared by every subscriber of that
 * operation; results are kept in a WeakMap keyed by the event, so they go with it.
 *
 * Over WebSocket the gateway goes one step further (`contextValue.__direct`, set by src/graphql/ws.ts):
 * the shared result is also serialised once, and each subscriber's `next` message is that payload
 * with its own id around it, written to its socket as the event arrives (the iterator's push mode,
 * src/console/iterator.ts), without graphql-ws's promise chain per event and subscriber. graphql-ws
 * still runs everything else: the subscription's start, its completion and errors.
 *
 * Precondition, true of every subscription type in src/schema: the payload types have no field
 * whose value depends on who is asking (the context); what differs per subscriber (an activity
 * entry's address) is decided in its own iterator, which then yields an event object of its own.
 * Authorization happens per subscriber, when the subscription starts (its subscribe() resolver) and
 * when its rights change, not per event.
 */
import { createSourceEventStream, execute, print, type ExecutionArgs, type ExecutionResult } from 'graphql';
import type { PromiseOrValue } from 'graphql/jsutils/PromiseOrValue.js';
import { isPushable, PUSH, type PushableIterator } from '../console/iterator.js';
import { formatGraphQLError } from '../resolvers/errors.js';

type Result = PromiseOrValue<ExecutionResult>;

/** Writes one subscriber's `next` message whose payload is the given JSON text. */
export type DirectSink = (payloadJson: string) => void;

/** What src/graphql/ws.ts adds to a WebSocket operation's context. */
export interface DirectContext {
  __direct?: DirectSink;
}

/**
 * graphql's mapAsyncIterator, with one promise per `next` instead of three: it runs once per event
 * and subscriber, and every promise also pays for the async hooks of AsyncLocalStorage (MikroORM's
 * request context). A mapping that throws ends the source, as graphql's does.
 */
function mapEvents(source: AsyncIterable<unknown>, map: (event: unknown) => Result): AsyncGenerator<ExecutionResult, void, void> {
  const it = source[Symbol.asyncIterator]();
  const end = (err: unknown): Promise<never> => Promise.resolve(it.return?.()).then(() => Promise.reject(err), () => Promise.reject(err));
  const mapped: AsyncGenerator<ExecutionResult, void, void> = {
    next: () =>
      it.next().then((r): IteratorResult<ExecutionResult, void> | Promise<IteratorResult<ExecutionResult, void>> => {
        if (r.done) return { value: undefined, done: true };
        let value: Result;
        try {
          value = map(r.value);
        } catch (err) {
          return end(err);
        }
        return value instanceof Promise ? value.then((v) => ({ value: v, done: false }), end) : { value, done: false };
      }),
    return: () => Promise.resolve(it.return?.()).then(() => ({ value: undefined, done: true })),
    throw: (err: unknown) => (it.throw ? it.throw(err).then(() => ({ value: undefined, done: true })) : Promise.reject(err)),
    [Symbol.asyncIterator]() {
      return mapped;
    },
    [Symbol.asyncDispose]: async () => {
      await it.return?.();
    },
  };
  return mapped;
}

/** An event's result for one operation, and its payload text once a direct subscriber needed it. */
interface Shared {
  result: Result;
  json?: string;
}

const executed = new WeakMap<object, Map<string, Shared>>();

function sharedResult(args: ExecutionArgs, operation: string, event: unknown): Shared {
  if (typeof event !== 'object' || event === null) return { result: execute({ ...args, rootValue: event }) };
  let byOperation = executed.get(event);
  if (!byOperation) executed.set(event, (byOperation = new Map()));
  let shared = byOperation.get(operation);
  if (!shared) byOperation.set(operation, (shared = { result: execute({ ...args, rootValue: event }) }));
  return shared;
}

/** The `next` payload as graphql-ws's onNext hook (src/graphql/ws.ts) would send it. */
function payloadJson(result: ExecutionResult): string {
  if (!result.errors?.length) return JSON.stringify(result);
  return JSON.stringify({ ...result, errors: result.errors.map((e) => formatGraphQLError(e.toJSON(), e)) });
}

/**
 * Push mode: every event's shared payload goes to `sink` as it comes. A result that is a promise (not
 * one of the console types, whose fields resolve synchronously) waits its turn behind the earlier ones.
 * The generator handed to graphql-ws yields nothing; it ends when the source ends (completion) or
 * fails (an error message), and its `return` (the client's `complete`) ends the source.
 */
function pushEvents(source: PushableIterator<unknown>, args: ExecutionArgs, operation: string, sink: DirectSink): AsyncGenerator<ExecutionResult, void, void> {
  let pending: Promise<void> | null = null;
  const deliver = (shared: Shared): void => {
    if (shared.json !== undefined && !pending) return sink(shared.json);
    const r = shared.result;
    if (!(r instanceof Promise) && !pending) return sink((shared.json = payloadJson(r)));
    pending = (pending ?? Promise.resolve())
      .then(() => r)
      .then((done) => sink((shared.json ??= payloadJson(done))))
      .catch(() => undefined);
  };
  source[PUSH]((event) => deliver(sharedResult(args, operation, event)));
  return mapEvents(source, () => {
    throw new Error('a pushed subscription yields nothing');
  });
}

/** A drop-in for graphql's `subscribe` with per-event results shared between identical operations. */
export async function sharedSubscribe(args: ExecutionArgs): Promise<AsyncGenerator<ExecutionResult, void, void> | ExecutionResult> {
  const stream = await createSourceEventStream(args);
  if (!(Symbol.asyncIterator in (stream as object))) return stream as ExecutionResult;
  const operation = `${args.operationName ?? ''}\u0000${JSON.stringify(args.variableValues ?? {})}\u0000${print(args.document)}`;
  const sink = (args.contextValue as DirectContext | undefined)?.__direct;
  if (sink && isPushable<unknown>(stream)) return pushEvents(stream, args, operation, sink);
  return mapEvents(stream as AsyncIterable<unknown>, (event) => sharedResult(args, operation, event).result);
}
