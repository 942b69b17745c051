/**
 * Closing the panel's HTTP server without cutting requests short: it stops accepting connections,
 * closes idle keep-alive ones as they become idle, and waits for requests under way to answer (up to
 * `graceMs`) before dropping what is left. The database is closed after this, so no handler is left
 * querying a closed pool (which also made the pool library restart a timer that kept the process alive).
 */
import type { Server } from 'node:http';

export async function closeHttpServer(server: Server, graceMs: number): Promise<void> {
  if (!server.listening) return;
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const sweep = setInterval(() => server.closeIdleConnections(), 20);
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([closed, new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)))]);
  clearInterval(sweep);
  clearTimeout(timer);
  server.closeAllConnections();
  await closed;
}
