/**
 * Types commands into a server's console over the node console channel, for tests that make a server
 * flood its console. The channel also sends the flood back to this client, which a busy test process
 * may not read fast enough: the node then drops it (4408, client too slow) and the commands after it
 * would go nowhere. The commander opens a new session (with a new console token) whenever the last
 * one has closed, so every command reaches the server.
 */
import WebSocket from 'ws';
import { ConsoleClient } from './console-client.js';
import type { TestPlatform } from './harness.js';

export interface ConsoleCommander {
  send(command: string): Promise<void>;
  close(): void;
}

export function consoleCommander(p: TestPlatform, token: string, serverId: string): ConsoleCommander {
  let client: ConsoleClient | null = null;
  const open = async (): Promise<ConsoleClient> => {
    const t = await p.request('GET', `/api/v1/servers/${serverId}/console-token`, { token });
    return ConsoleClient.connect(t.body.data.socket, t.body.data.token);
  };
  return {
    async send(command: string): Promise<void> {
      if (!client || client.closed || client.ws.readyState !== WebSocket.OPEN) {
        client?.close();
        client = await open();
      }
      client.send({ type: 'command', data: command });
    },
    close(): void {
      client?.close();
    },
  };
}
