import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { signRequest } from '../../src/shared/node-protocol';
import { createServer, demoSpec, logs, newId, power, startHarness, startRunning, waitFor, waitStatus, type Harness } from './helpers';
import { sleep } from '../support/wait.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  expect(await h?.close()).toEqual([]);
});

const raw = async (method: string, p: string, headers: Record<string, string> = {}, body?: string) => {
  const res = await fetch(h.base + p, { method, headers, body });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
};

describe('agent HTTP API authentication', () => {
  test('missing / malformed / wrong-key / wrong-node signatures → 401 JSON', async () => {
    for (const headers of <Record<string, string>[]>[
      {},
      { authorization: 'Bearer abc' },
      { authorization: signRequest(h.nodeId, Buffer.alloc(32, 1), 'GET', '/api/system') },
      { authorization: signRequest('other-node', h.nodeKey, 'GET', '/api/system') },
      { authorization: signRequest(h.nodeId, h.nodeKey, 'GET', '/api/other') },
    ]) {
      const r = await raw('GET', '/api/system', headers);
      expect(r.status).toBe(401);
      expect(r.body).toEqual({ error: { code: 'UNAUTHORIZED', message: expect.any(String), details: {} } });
    }
  });

  test('a replayed request is rejected', async () => {
    const auth = signRequest(h.nodeId, h.nodeKey, 'GET', '/api/system');
    expect((await raw('GET', '/api/system', { authorization: auth })).status).toBe(200);
    expect((await raw('GET', '/api/system', { authorization: auth })).status).toBe(401);
  });

  test('a request captured before the agent restarted is refused after it (the nonces of the previous run are gone)', async () => {
    const auth = signRequest(h.nodeId, h.nodeKey, 'GET', '/api/system');
    expect((await raw('GET', '/api/system', { authorization: auth })).status).toBe(200);
    await sleep(1100); // the restart is in a later second than the signature
    await h.restartAgent();
    expect((await raw('GET', '/api/system', { authorization: auth })).status).toBe(401);
    expect((await h.request('GET', '/api/system')).status).toBe(200); // freshly signed requests work
  });

  test('the body is covered by the signature', async () => {
    const id = newId();
    const body = JSON.stringify(demoSpec(id));
    const auth = signRequest(h.nodeId, h.nodeKey, 'PUT', `/api/servers/${id}`, body);
    const r = await raw('PUT', `/api/servers/${id}`, { authorization: auth, 'content-type': 'application/json' }, body.replace('256', '999'));
    expect(r.status).toBe(401);
  });
});

describe('agent HTTP API', () => {
  test('GET /api/system → NodeStats', async () => {
    const r = await h.request('GET', '/api/system');
    expect(r.status).toBe(200);
    const s = r.body.data;
    expect(s.online).toBe(true);
    expect(s.cpu.cores).toBeGreaterThan(0);
    expect(typeof s.cpu.usage).toBe('number');
    expect(s.cpu.load).toHaveLength(3);
    expect(s.memory.total).toBeGreaterThan(s.memory.used);
    expect(s.disk.total).toBeGreaterThan(0);
    expect(s.servers).toEqual({ total: expect.any(Number), running: expect.any(Number) });
    // whole seconds since the agent started
    expect(Number.isInteger(s.uptime)).toBe(true);
  });

  test('heartbeat and events reach the panel, signed', async () => {
    await waitFor(() => h.panel.heartbeats.length >= 2, 'two heartbeats');
    expect(h.panel.heartbeats[0]!.online).toBe(true);
    expect(h.panel.badSignatures).toBe(0);
  });

  test('unknown server → 404, unknown route → 404, invalid id → 404/422', async () => {
    expect((await h.request('GET', `/api/servers/${newId()}`)).body.error.code).toBe('NOT_FOUND');
    expect((await h.request('GET', '/api/nothing')).status).toBe(404);
    expect((await h.request('GET', '/api/servers/..%2F..%2Fetc')).status).toBe(404);
    const r = await h.request('PUT', '/api/servers/bad%20id', demoSpec('x'));
    expect(r.status).toBe(422);
  });

  test('validation: bad spec → 422 with fields; malformed JSON → 400; body over 1 MiB → 400', async () => {
    const id = newId();
    let r = await h.request('PUT', `/api/servers/${id}`, { ...demoSpec(id), memory: 'lots', ready: '([' });
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe('VALIDATION_ERROR');
    expect(Object.keys(r.body.error.details.fields)).toEqual(expect.arrayContaining(['memory', 'ready']));
    r = await h.request('PUT', `/api/servers/${id}`, { ...demoSpec(id), id: 'another' });
    expect(r.status).toBe(422);
    const bad = '{"startup":';
    const auth = signRequest(h.nodeId, h.nodeKey, 'PUT', `/api/servers/${id}`, bad);
    r = await raw('PUT', `/api/servers/${id}`, { authorization: auth, 'content-type': 'application/json' }, bad);
    expect(r.status).toBe(400);
    expect(r.body.error).toEqual({ code: 'BAD_REQUEST', message: expect.any(String), details: {} });
    const big = JSON.stringify({ ...demoSpec(id), name: 'x'.repeat(1024 * 1024 + 10) });
    const auth2 = signRequest(h.nodeId, h.nodeKey, 'PUT', `/api/servers/${id}`, big);
    r = await raw('PUT', `/api/servers/${id}`, { authorization: auth2, 'content-type': 'application/json' }, big);
    expect(r.status).toBe(400);
    r = await h.request('POST', `/api/servers/${newId()}/power`, { action: 'start' });
    expect(r.status).toBe(404);
  });

  test('power: invalid action → 422; start while installing → 422 INVALID_STATE', async () => {
    const id = newId();
    const r0 = await h.request('PUT', `/api/servers/${id}`, { ...demoSpec(id), install: 'sleep 1; echo done' });
    expect(r0.body.data.status).toBe('installing');
    let r = await h.request('POST', `/api/servers/${id}/power`, { action: 'explode' });
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe('VALIDATION_ERROR');
    r = await h.request('POST', `/api/servers/${id}/power`, { action: 'start' });
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe('INVALID_STATE');
    await waitFor(async () => (await h.request('GET', `/api/servers/${id}`)).body.data.status === 'offline', 'install done');
  });

  test('PUT on an existing server updates the spec (used at next start)', async () => {
    const id = newId();
    await createServer(h, demoSpec(id));
    const r = await h.request('PUT', `/api/servers/${id}`, demoSpec(id, { memory: 512 }, { MOTD: 'updated motd' }));
    expect(r.status).toBe(200);
    expect(r.body.data.status).toBe('offline');
    await h.request('POST', `/api/servers/${id}/power`, { action: 'start' });
    await waitFor(
      async () => ((await h.request('GET', `/api/servers/${id}/logs`)).body.data.lines as string[]).some((l) => l.includes('Message of the day: updated motd')),
      'new motd',
    );
    expect((await h.request('GET', `/api/servers/${id}`)).body.data).toMatchObject({
      id,
      startedAt: expect.any(String),
      stats: { cpu: expect.any(Number), memory: expect.any(Number), disk: expect.any(Number), uptime: expect.any(Number) },
    });
    await h.request('POST', `/api/servers/${id}/power`, { action: 'kill' });
  });
});

describe('pushes that arrive out of order (a panel PATCH racing another PATCH or the DELETE)', () => {
  test('a spec with a lower revision than the one in use is ignored; the next start runs the newer one', async () => {
    const id = newId();
    await createServer(h, demoSpec(id, { revision: 0 }, { MOTD: 'motd-0' }));
    expect((await h.request('PUT', `/api/servers/${id}`, demoSpec(id, { revision: 2 }, { MOTD: 'motd-2' }))).status).toBe(200);
    // revision 1 was sent before revision 2 but arrives after it
    expect((await h.request('PUT', `/api/servers/${id}`, demoSpec(id, { revision: 1 }, { MOTD: 'motd-1' }))).status).toBe(200);
    await startRunning(h, id);
    const said = await waitFor(async () => (await logs(h, id)).find((l) => l.includes('Message of the day')), 'the message of the day');
    expect(said).toContain('motd-2');
    expect((await power(h, id, 'kill')).status).toBe(200);
    await waitStatus(h, id, 'offline');
  }, 30_000);

  test('a push of a server removed since is refused with NOT_FOUND, and its files stay removed', async () => {
    const id = newId();
    await createServer(h, demoSpec(id));
    const dir = path.join(h.dataDir, 'agent', 'servers', id);
    expect(existsSync(dir)).toBe(true);
    expect((await h.request('DELETE', `/api/servers/${id}`)).status).toBe(204);
    const late = await h.request('PUT', `/api/servers/${id}`, demoSpec(id, { revision: 1 }));
    expect(late.status).toBe(404);
    expect(late.body.error.code).toBe('NOT_FOUND');
    expect(existsSync(dir)).toBe(false);
    expect((await h.request('GET', `/api/servers/${id}`)).status).toBe(404);
  });
});

describe('deleting a server with many files', () => {
  test('its directory is gone when DELETE answers; the files are removed in the background, and leftovers at the next boot', async () => {
    const id = newId();
    await createServer(h, demoSpec(id));
    const dir = path.join(h.dataDir, 'agent', 'servers', id);
    // made without holding this process's event loop: a keep-alive connection that the agent closed
    // meanwhile (idle 5 s) would otherwise be reused by the DELETE (ECONNRESET on a loaded machine)
    mkdirSync(path.join(dir, 'many'));
    for (let i = 0; i < 5000; i += 500) await Promise.all(Array.from({ length: 500 }, (_, j) => writeFile(path.join(dir, 'many', `f${i + j}`), 'x')));
    // the server's own files (they are removed as its user)
    const owner = statSync(dir);
    await promisify(execFile)('chown', ['-R', `${owner.uid}:${owner.gid}`, dir]);
    expect((await h.request('DELETE', `/api/servers/${id}`)).status).toBe(204);
    expect(existsSync(dir)).toBe(false);
    const serversDir = path.join(h.dataDir, 'agent', 'servers');
    await waitFor(() => readdirSync(serversDir).every((n) => !n.startsWith('.deleted-')), 'the deleted files to be removed');

    // a removal the previous run did not finish is done at the next boot
    const leftover = path.join(serversDir, `.deleted-${newId()}-1`);
    mkdirSync(path.join(leftover, 'deep'), { recursive: true });
    writeFileSync(path.join(leftover, 'deep', 'file'), 'x');
    await h.restartAgent();
    await waitFor(() => !existsSync(leftover), 'the leftover to be removed at boot');
  }, 30_000);
});

describe('the signature before the body', () => {
  test('a request of another node is refused without its body being read (a 2 MiB body is not a 400)', async () => {
    const big = 'x'.repeat(2 * 1024 * 1024);
    const r = await raw('POST', `/api/servers/${newId()}/commands`, { authorization: signRequest('other-node', h.nodeKey, 'POST', `/api/servers/x/commands`, big), 'content-type': 'application/json' }, big);
    expect(r.status).toBe(401);
  });
});
