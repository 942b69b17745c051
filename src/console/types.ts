/** Events of a server's console as the gateway relays them (the node's channel message types). */
export type ConsoleEventType =
  | 'console_output'
  | 'install_output'
  | 'console_skipped'
  | 'console_batch'
  | 'status'
  | 'stats'
  | 'gone'
  | 'access'
  | 'revoked'
  | 'activity'
  | 'backup';

export interface ConsoleEvent {
  type: ConsoleEventType;
  data: any;
}

/**
 * `gone` is the gateway's own (never a node's): the server no longer exists (deleted), so its feed
 * stops and every subscription to it ends. It travels on the bus like the rest, to every instance.
 */
export const GONE: ConsoleEvent = { type: 'gone', data: {} };

/**
 * `access` is the gateway's own too: a user's rights on the server changed (`data.userId`), so every
 * instance re-checks that user's subscriptions to it. `revoked` never travels: it is what one
 * subscriber gets when that check finds it may no longer watch, and it ends the subscription.
 */
export const accessChanged = (userId: string): ConsoleEvent => ({ type: 'access', data: { userId } });
/**
 * An `access` event without a user: anyone's rights on the server may have changed unheard (the bus
 * of this instance may have missed `access` events), so every subscription to it re-checks.
 */
export const ANY_ACCESS_CHANGED: ConsoleEvent = { type: 'access', data: {} };
export const REVOKED: ConsoleEvent = { type: 'revoked', data: {} };
/** `activity` carries a new activity-log entry of the server to the instances that have its subscribers. */

/**
 * What a feed relays from the node. `console_skipped` (data `{ skipped }`) counts lines the node dropped
 * under its flood budget (CONSOLE_MAX_LINES_PER_SECOND); it reaches batch subscribers as `skipped`.
 */
export const RELAYED_TYPES: ReadonlySet<string> = new Set<ConsoleEventType>(['console_output', 'install_output', 'console_skipped', 'status', 'stats']);

/**
 * `console_batch` is the gateway's own, made by src/console/batcher.ts for batch subscribers: the lines
 * of up to BATCH_INTERVAL_MS and the lines the node dropped meanwhile. Install lines have stream `install`.
 */
export interface BatchLine {
  line: string;
  stream: string;
  ts: string;
  seq: number | null;
}
export interface ConsoleBatchData {
  lines: BatchLine[];
  skipped: number;
}
export { CONSOLE_BATCH_EVERY_MS as BATCH_INTERVAL_MS } from '../shared/node-protocol.js';
export const HISTORY_LINES = 150;

/**
 * The most events one Redis message of the bus carries for a server (what waited during one flush),
 * and so the most that reach a subscriber in one go: a subscriber's queue holds more than this
 * (src/console/iterator.ts) before it counts as fallen behind.
 */
export const MAX_BATCH_EVENTS = 10_000;
