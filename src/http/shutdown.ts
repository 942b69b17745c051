/**
 * Closing the panel's HTTP server without cutting requests short: it stops accepting connections,
 * closes idle keep-alive ones as they become idle, and waits for requests under way to answer (up to
 * `graceMs`) before dropping what is left. The database is closed after this, so no handler is left
 * querying a closed pool (which also made the pool library restart a timer that kept the process alive).
 */
import type { Server } from 'node:http';
import { childLogger } from '../logger.js';

const log = childLogger('http');

export async function closeHttpServer(server: Server, graceMs: number): Promise<void> {
  if (!server.listening) return;
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const sweep = setInterval(() => server.closeIdleConnections(), 20);
  const inTime = await within(closed, graceMs);
  clearInterval(sweep);
  if (inTime) return;
  server.closeAllConnections();
  // closeAllConnections() does not reach upgraded (WebSocket) sockets; their owners close them first,
  // and a straggler must not hold the shutdown
  if (!(await within(closed, 1000))) log.warn('HTTP server still had open connections after closing; going on');
}

/** Whether `p` settled within `ms`. */
async function within(p: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([p.then(() => true as const), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
