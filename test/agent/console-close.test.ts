/**
 * A console socket the node ends (access revoked, over the user's cap, server deleted) acts on
 * nothing its peer sends afterwards, even a peer that ignores the close frame and goes on sending;
 * a renewal of a socket's token must be for the same user.
 */
import { createServer, newId, power, specFor, startHarness, waitFor, waitStatus, type Harness } from './helpers';
import jwt from 'jsonwebtoken';
import { RawWs } from '../support/raw-ws';
import { sleep } from '../support/wait';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({}, { wsMaxConnectionsPerUser: 2 });
}, 60_000);
afterAll(async () => {
  expect(await h?.close()).toEqual([]);
});

const ECHO = 'echo "Shell server ready"; while IFS= read -r line; do echo "> $line"; done';

async function echoServer(): Promise<string> {
  const id = newId();
  await createServer(h, specFor('shell-command', id, {}, { COMMAND: ECHO }));
  await power(h, id, 'start');
  await waitStatus(h, id, 'running');
  return id;
}

async function rawAuth(id: string, sub: string): Promise<RawWs> {
  const r = await RawWs.connect(h.agent.port);
  r.send({ type: 'auth', token: h.token(id, { sub }) });
  await waitFor(() => r.json().find((m) => m.type === 'auth_success' || m.type === 'error'), 'the answer to auth');
  return r;
}

/** Sends a command and a restart from `r`; returns what a watcher saw of them after a while. */
async function actAfterClose(r: RawWs, id: string): Promise<{ echoed: boolean; statuses: string[] }> {
  const watcher = await h.console(id);
  try {
    r.send({ type: 'command', data: 'after-the-end' });
    r.send({ type: 'power', data: 'restart' });
    // the node cuts such a peer off after a second; what it acted on meanwhile shows by then
    await sleep(700);
    // a command sent by a live socket after those is echoed: the server did read its input
    watcher.send({ type: 'command', data: 'marker' });
    await waitFor(() => watcher.messages.some((m) => m.type === 'console_output' && m.data.line === '> marker'), 'the marker echo');
    return {
      echoed: watcher.messages.some((m) => m.type === 'console_output' && m.data.line === '> after-the-end'),
      statuses: watcher.messages.filter((m) => m.type === 'status').map((m) => m.data.status),
    };
  } finally {
    watcher.close();
    r.destroy();
  }
}

test('a revoked socket whose peer ignores the close frame runs no command and no power action', async () => {
  const id = await echoServer();
  const r = await rawAuth(id, 'user-revoked');
  expect(r.json().map((m) => m.type)).toContain('auth_success');
  expect((await h.request('POST', `/api/servers/${id}/revoke`, { userId: 'user-revoked' })).status).toBe(200);
  await waitFor(() => r.closeFrame(), 'the close frame');
  expect(r.closeFrame()!.code).toBe(4403);
  expect(await actAfterClose(r, id)).toEqual({ echoed: false, statuses: [] });
}, 30_000);

test('a socket over its user\u2019s cap whose peer ignores the close frame runs nothing', async () => {
  const id = await echoServer();
  const kept = [await rawAuth(id, 'user-capped'), await rawAuth(id, 'user-capped')];
  const third = await rawAuth(id, 'user-capped');
  await waitFor(() => third.closeFrame(), 'the close frame of the third socket');
  expect(third.closeFrame()!.code).toBe(4429);
  expect(await actAfterClose(third, id)).toEqual({ echoed: false, statuses: [] });
  for (const k of kept) k.destroy();
}, 30_000);

test('a renewal with another user\u2019s token is refused: the socket stays its first user\u2019s', async () => {
  const id = await echoServer();
  const kept = [await rawAuth(id, 'user-full'), await rawAuth(id, 'user-full')];
  const other = await rawAuth(id, 'someone-else');
  other.send({ type: 'auth', token: h.token(id, { sub: 'user-full' }) });
  await waitFor(() => other.json().find((m) => m.type === 'error'), 'the answer to the renewal');
  expect(other.json().find((m) => m.type === 'error').data).toEqual({ code: 'FORBIDDEN', message: expect.stringContaining('same user') });
  expect(other.json().filter((m) => m.type === 'auth_success')).toHaveLength(1);
  // a renewal as the same user still works
  other.send({ type: 'auth', token: h.token(id, { sub: 'someone-else' }) });
  await waitFor(() => other.json().filter((m) => m.type === 'auth_success').length === 2 || null, 'the renewal');
  for (const s of [...kept, other]) s.destroy();
}, 30_000);

test('a change of rights that reaches the node late ends only the sockets of tokens issued before it', async () => {
  // the node dated the change when it heard of it: a token the panel issued after the change, with the
  // rights left, was refused and its socket closed when the change came late
  const id = await echoServer();
  const changedAt = Date.now();
  const tokenAt = (issuedAt: number) => jwt.sign({ sub: 'user-late', srv: id, node: h.nodeId, perms: ['websocket.connect', 'control.console'], issuedAt }, h.consoleKey, { algorithm: 'HS256', expiresIn: 600 });
  const open = async (issuedAt: number) => {
    const c = await h.console(id, { auth: false });
    c.send({ type: 'auth', token: tokenAt(issuedAt) });
    await c.next('auth_success');
    return c;
  };
  const [before, after] = [await open(changedAt - 1000), await open(changedAt + 1)];
  expect((await h.request('POST', `/api/servers/${id}/revoke`, { userId: 'user-late', at: changedAt })).status).toBe(200);
  await waitFor(() => before.closeCode, 'the older socket to close');
  expect([before.closeCode, after.closeCode]).toEqual([4403, null]);
  const again = await h.console(id, { auth: false });
  again.send({ type: 'auth', token: tokenAt(changedAt - 1) });
  expect((await again.next('error')).data.code).toBe('TOKEN_REVOKED');
  const fresh = await open(changedAt + 2);
  fresh.send({ type: 'command', data: 'still here' });
  await fresh.waitFor((m) => m.type === 'console_output' && m.data.line === '> still here');
  for (const c of [after, again, fresh]) c.close();
});
