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
import { mapAsyncIterator } from 'graphql/execution/mapAsyncIterator.js';
import type { PromiseOrValue } from 'graphql/jsutils/PromiseOrValue.js';

type Result = PromiseOrValue<ExecutionResult>;

const executed = new WeakMap<object, Map<string, Result>>();

/** A drop-in for graphql's `subscribe` with per-event results shared between identical operations. */
export async function sharedSubscribe(args: ExecutionArgs): Promise<AsyncGenerator<ExecutionResult, void, void> | ExecutionResult> {
  const stream = await createSourceEventStream(args);
  if (!(Symbol.asyncIterator in (stream as object))) return stream as ExecutionResult;
  const operation = `${args.operationName ?? ''}\u0000${JSON.stringify(args.variableValues ?? {})}\u0000${print(args.document)}`;
  return mapAsyncIterator(stream as AsyncIterable<unknown>, (event): Result => {
    if (typeof event !== 'object' || event === null) return execute({ ...args, rootValue: event });
    let byOperation = executed.get(event);
    if (!byOperation) executed.set(event, (byOperation = new Map()));
    let result = byOperation.get(operation);
    if (!result) byOperation.set(operation, (result = execute({ ...args, rootValue: event })));
    return result;
  }) as AsyncGenerator<ExecutionResult, void, void>;
}
