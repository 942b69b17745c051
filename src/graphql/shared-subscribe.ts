/**
 * graphql-js executes a subscription's selection set once per event and per subscriber. Console
 * subscribers of one server all receive the same event object from the console hub (one upstream
 * feed, one conversion per event), so 500 viewers of a console cost 500 identical executions of
 * `consoleOutput { line ts }` per line. Here each event is executed once per distinct operation
 * (same text, operation name and variables) and the result is shared by every subscriber of that
 * operation; results are kept in a WeakMap keyed by the event, so they go with it.
 *
 * Precondition, true of every subscription type in src/schema: the payload types have no field
 * whose value depends on who is asking (the context). Authorization happens once, when the
 * subscription starts (its subscribe() resolver), not per event.
 */
import { createSourceEventStream, execute, print, type ExecutionArgs, type ExecutionResult } from 'graphql';
import type { PromiseOrValue } from 'graphql/jsutils/PromiseOrValue.js';

type Result = PromiseOrValue<ExecutionResult>;

/**
 * graphql's mapAsyncIterator, with one promise per `next` instead of three: it runs once per event
 * and subscriber, and every promise also pays for the async hooks of AsyncLocalStorage (MikroORM's
 * request context), which a profile of 500 console viewers showed as a seventh of the gateway's CPU.
 * A mapping that throws ends the source, as graphql's does.
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

const executed = new WeakMap<object, Map<string, Result>>();

/** A drop-in for graphql's `subscribe` with per-event results shared between identical operations. */
export async function sharedSubscribe(args: ExecutionArgs): Promise<AsyncGenerator<ExecutionResult, void, void> | ExecutionResult> {
  const stream = await createSourceEventStream(args);
  if (!(Symbol.asyncIterator in (stream as object))) return stream as ExecutionResult;
  const operation = `${args.operationName ?? ''}\u0000${JSON.stringify(args.variableValues ?? {})}\u0000${print(args.document)}`;
  return mapEvents(stream as AsyncIterable<unknown>, (event): Result => {
    if (typeof event !== 'object' || event === null) return execute({ ...args, rootValue: event });
    let byOperation = executed.get(event);
    if (!byOperation) executed.set(event, (byOperation = new Map()));
    let result = byOperation.get(operation);
    if (!result) byOperation.set(operation, (result = execute({ ...args, rootValue: event })));
    return result;
  });
}
