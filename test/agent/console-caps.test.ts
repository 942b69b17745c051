/**
 * The node's console socket is bounded: upgrades to other paths are a 404; an address may hold only
 * so many sockets that have not authenticated (the next upgrade is a 429); a user only so many
 * authenticated sockets (the next is closed with 4429); closing sockets frees their places.
 */
import { connect } from 'node:net';
import { ConsoleClient, createServer, demoSpec, newId, sleep, startHarness, waitFor, type Harness } from './helpers';

let h: Harness;
const id = newId();
beforeAll(async () => {
  h = await startHarness({}, { wsMaxConnectionsPerUser: 3, wsMaxAnonymousPerAddress: 2 });
  await createServer(h, demoSpec(id));
}, 60_000);
afterAll(async () => {
  expect(await h?.close()).toEqual([]);
});

/** The first line of the agent's answer to a raw upgrade request to `path`. */
function upgradeStatus(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(h.agent.port, '127.0.0.1', () => {
      s.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`);
    });
    let text = '';
    s.on('data', (d) => {
      text += d.toString();
      if (text.includes('\r\n')) {
        resolve(text.split('\r\n')[0]!);
        s.destroy();
      }
    });
    s.on('error', reject);
  });
}

test('an upgrade to another path is a 404', async () => {
  expect(await upgradeStatus('/other')).toBe('HTTP/1.1 404 Not Found');
});

test('unauthenticated sockets per address are capped; closing one frees its place', async () => {
  const a = await h.console(id, { auth: false });
  const b = await h.console(id, { auth: false });
  expect(await upgradeStatus('/console')).toBe('HTTP/1.1 429 Too Many Requests');
  a.close();
  await waitFor(async () => (await upgradeStatus('/console')).includes('101'), 'a place to free up');
  b.close();
});

test('authenticated sockets per user are capped at the limit (the next one is closed with 4429)', async () => {
  const open: ConsoleClient[] = [];
  for (let i = 0; i < 3; i++) open.push(await h.console(id, { sub: 'user-capped' } as any));
  const extra = await ConsoleClient.connect(`ws://127.0.0.1:${h.agent.port}/console`);
  extra.send({ type: 'auth', token: h.token(id, { sub: 'user-capped' }) });
  expect((await extra.waitClosed()).code).toBe(4429);
  // another user is not affected
  const other = await h.console(id, { sub: 'someone-else' } as any);
  other.close();
  open.shift()!.close();
  await sleep(200); // the agent sees the close
  const again = await h.console(id, { sub: 'user-capped' } as any);
  expect(again.closed).toBeNull();
  for (const c of [...open, again]) c.close();
});
