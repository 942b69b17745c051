/** Events of a server's console as the gateway relays them (the node's channel message types). */
export type ConsoleEventType = 'console_output' | 'install_output' | 'status' | 'stats' | 'gone';

export interface ConsoleEvent {
  type: ConsoleEventType;
  data: any;
}

/**
 * `gone` is the gateway's own (never a node's): the server no longer exists (deleted), so its feed
 * stops and every subscription to it ends. It travels on the bus like the rest, to every instance.
 */
export const GONE: ConsoleEvent = { type: 'gone', data: {} };

export const RELAYED_TYPES: ReadonlySet<string> = new Set<ConsoleEventType>(['console_output', 'install_output', 'status', 'stats']);
export const HISTORY_LINES = 150;
