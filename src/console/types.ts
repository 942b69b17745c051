/** Events of a server's console as the gateway relays them (the node's channel message types). */
export type ConsoleEventType = 'console_output' | 'install_output' | 'status' | 'stats';

export interface ConsoleEvent {
  type: ConsoleEventType;
  data: any;
}

export const RELAYED_TYPES: ReadonlySet<string> = new Set<ConsoleEventType>(['console_output', 'install_output', 'status', 'stats']);
export const HISTORY_LINES = 150;
