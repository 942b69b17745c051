/** Closing the panel's HTTP server (src/http/shutdown.ts): requests under way are answered, and nothing holds the close for ever. */
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { closeHttpServer } from '../../src/http/shutdown.js';
import { sleep } from '../support/wait.js';

function listen(handler: http.RequestListener): Promise<http.Server & { port: number }> {
  const server = http.createServer(handler);
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(Object.assign(server, { port: (server.address() as AddressInfo).port }))));
}

test('a request under way when the close begins still gets its whole answer; new connections are refused', async () => {
  const server = await listen((_req, res) => setTimeout(() => res.end('finished'), 300));
  const reply = fetch(`http://127.0.0.1:${server.port}/`).then(async (r) => ({ status: r.status, text: await r.text() }));
  await sleep(50); // the request has reached the handler
  const closing = closeHttpServer(server, 5000);
  await expect(reply).resolves.toEqual({ status: 200, text: 'finished' });
  await closing;
  await expect(fetch(`http://127.0.0.1:${server.port}/`)).rejects.toThrow();
});

test('a request that outlasts the grace period is cut off, and an upgraded socket left open does not hold the close', async () => {
  const server = await listen(() => undefined); // never answers
  server.on('upgrade', (_req, socket) => socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n')); // and never closes
  const hanging = fetch(`http://127.0.0.1:${server.port}/`).then(() => 'answered', (e: Error) => e);
  const upgraded = net.connect(server.port, '127.0.0.1');
  upgraded.on('error', () => undefined);
  await new Promise<void>((r) => upgraded.once('connect', () => r()));
  upgraded.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: x\r\n\r\n');
  await new Promise((r) => upgraded.once('data', r));
  try {
    const t0 = Date.now();
    await closeHttpServer(server, 300);
    const took = Date.now() - t0;
    expect(took).toBeGreaterThanOrEqual(250);
    expect(took).toBeLessThan(3000);
    expect(String(await hanging)).toMatch(/fetch failed/);
  } finally {
    upgraded.destroy();
  }
});
