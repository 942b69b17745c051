import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { SERVER_UID_BASE } from '../../src/agent/environment/isolation';
import { createServer, demoSpec, getState, logs, newId, power, specFor, startHarness, startRunning, waitFor, waitStatus, type Harness } from './helpers';
import { sleep } from '../support/wait.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ crashLoopWindowMs: 60000, diskCheckIntervalMs: 300 });
});
afterAll(async () => {
  expect(await h?.close()).toEqual([]);
});

describe('demo game lifecycle', () => {
  test('create → install → start → running after ready line → say over console → stop → offline', async () => {
    const id = newId();
    const put = await h.request('PUT', `/api/servers/${id}`, demoSpec(id, {}, { MOTD: 'hello world; rm -rf / "$(x)"' }));
    expect(put.status).toBe(200);
    expect(put.body.data).toMatchObject({ id, status: 'installing' });
    await waitStatus(h, id, 'offline');
    const installLines = await logs(h, id);
    expect(installLines.join('\n')).toContain('Wrote server.properties');

    const start = await power(h, id, 'start');
    expect(start.status).toBe(200);
    expect(['starting', 'running']).toContain(start.body.data.status);
    // not running before the ready line
    expect(start.body.data.status).toBe('starting');
    await waitStatus(h, id, 'running');
    const lines = await logs(h, id);
    expect(lines.some((l) => /Done \([0-9.]+s\)! For help/.test(l))).toBe(true);
    // the MOTD stayed one argv element, shell syntax untouched
    expect(lines.some((l) => l.includes('Message of the day: hello world; rm -rf / "$(x)"'))).toBe(true);

    // start while running is a no-op
    const again = await power(h, id, 'start');
    expect(again.status).toBe(200);
    expect(again.body.data.status).toBe('running');

    const c = await h.console(id);
    c.send({ type: 'command', data: 'say hello' });
    await c.next('console_output', (m) => m.data.line.includes('[Server] hello'));

    const stop = await power(h, id, 'stop');
    expect(stop.body.data.status).toBe('stopping');
    await c.next('status', (m) => m.data.status === 'offline');
    const st = await waitStatus(h, id, 'offline');
    expect(st.exitCode).toBe(0);
    expect(st.reason).toBe('stopped');
    expect((await logs(h, id)).some((l) => l.includes('Saving worlds'))).toBe(true);
    await waitFor(() => h.panel.eventsFor(id).some((e) => e.status === 'offline' && e.reason === 'stopped'), 'offline event at panel');
    const statuses = h.panel.statusesFor(id);
    expect(statuses.indexOf('installing')).toBeLessThan(statuses.indexOf('starting'));
    expect(statuses.indexOf('starting')).toBeLessThan(statuses.indexOf('running'));
    expect(statuses.lastIndexOf('stopping')).toBeLessThan(statuses.lastIndexOf('offline'));
    c.close();
  });

  test('commands endpoint: 204 while running, 422 INVALID_STATE otherwise', async () => {
    const id = newId();
    await createServer(h, demoSpec(id));
    let r = await h.request('POST', `/api/servers/${id}/commands`, { command: 'list' });
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe('INVALID_STATE');
    await startRunning(h, id);
    r = await h.request('POST', `/api/servers/${id}/commands`, { command: 'list' });
    expect(r.status).toBe(204);
    await waitFor(async () => (await logs(h, id)).some((l) => l.includes('players online')), 'list output');
    r = await h.request('POST', `/api/servers/${id}/commands`, { command: 'a\nstop' });
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe('VALIDATION_ERROR');
    await power(h, id, 'kill');
  });

  test('kill: SIGKILL at once → offline', async () => {
    const id = newId();
    await createServer(h, demoSpec(id));
    await startRunning(h, id);
    const r = await power(h, id, 'kill');
    expect(r.status).toBe(200);
    expect(r.body.data.status).toBe('offline');
    expect(r.body.data.reason).toBe('killed');
    await waitFor(() => h.panel.eventsFor(id).some((e) => e.status === 'offline' && e.reason === 'killed'), 'killed event');
  });

  test('a crash is detected with its exit code; auto-restart with crash-loop guard', async () => {
    const id = newId();
    await createServer(h, demoSpec(id));
    await startRunning(h, id);
    await h.request('POST', `/api/servers/${id}/commands`, { command: 'crash 3' });
    const st = await waitStatus(h, id, 'offline');
    expect(st.exitCode).toBe(3);
    expect(st.reason).toBe('crashed');
    await waitFor(() => h.panel.eventsFor(id).some((e) => e.status === 'offline' && e.reason === 'crashed' && e.exitCode === 3), 'crash event');
    // no auto-restart without autoRestart
    await sleep(400);
    expect((await getState(h, id)).status).toBe('offline');

    // with autoRestart: first crash restarts, a second crash within the window does not
    const id2 = newId();
    await createServer(h, demoSpec(id2, { autoRestart: true }));
    await startRunning(h, id2);
    await h.request('POST', `/api/servers/${id2}/commands`, { command: 'crash 7' });
    await waitFor(() => h.panel.eventsFor(id2).some((e) => e.reason === 'crashed'), 'first crash');
    await waitStatus(h, id2, 'running');
    await h.request('POST', `/api/servers/${id2}/commands`, { command: 'crash 8' });
    await waitFor(() => h.panel.eventsFor(id2).filter((e) => e.reason === 'crashed').length === 2, 'second crash');
    await sleep(600);
    expect((await getState(h, id2)).status).toBe('offline');
    expect((await logs(h, id2)).some((l) => l.includes('not restarting automatically'))).toBe(true);
  });

  test('memory limit: killed with reason memory_limit', async () => {
    const id = newId();
    await createServer(h, demoSpec(id, { memory: 120 }));
    await startRunning(h, id);
    await h.request('POST', `/api/servers/${id}/commands`, { command: 'eat 200' });
    const st = await waitStatus(h, id, 'offline');
    expect(st.reason).toBe('memory_limit');
    await waitFor(() => h.panel.eventsFor(id).some((e) => e.reason === 'memory_limit'), 'memory_limit event');
    expect((await logs(h, id)).some((l) => /over its limit of 120 MiB/.test(l))).toBe(true);
  });

  test('a lower memory limit pushed while the server runs takes effect at the next start, not on the running process', async () => {
    const id = newId();
    await createServer(h, demoSpec(id, { memory: 400 }));
    await startRunning(h, id);
    await h.request('POST', `/api/servers/${id}/commands`, { command: 'eat 150' });
    await waitFor(async () => (await logs(h, id)).some((l) => /150/.test(l) && /MiB/.test(l) && !/over its limit/.test(l)), 'the memory to be taken');
    expect((await h.request('PUT', `/api/servers/${id}`, demoSpec(id, { memory: 100, revision: 1 }))).status).toBe(200);
    // several memory checks (one a second) later, the process still runs with the limit it started with
    await sleep(2500);
    expect((await getState(h, id)).status).toBe('running');
    expect((await logs(h, id)).some((l) => /over its limit/.test(l))).toBe(false);
    // the next start runs under the new limit
    expect((await power(h, id, 'kill')).status).toBe(200);
    await waitStatus(h, id, 'offline');
    await startRunning(h, id);
    await h.request('POST', `/api/servers/${id}/commands`, { command: 'eat 150' });
    const st = await waitStatus(h, id, 'offline');
    expect(st.reason).toBe('memory_limit');
    expect((await logs(h, id)).some((l) => /over its limit of 100 MiB/.test(l))).toBe(true);
  }, 30_000);

  test('disk limit: start refused with 422 DISK_LIMIT', async () => {
    const id = newId();
    await createServer(h, demoSpec(id, { disk: 2 }));
    writeFileSync(path.join(h.dataDir, 'agent', 'servers', id, 'big.bin'), Buffer.alloc(3 * 1024 * 1024));
    const r = await power(h, id, 'start');
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe('DISK_LIMIT');
    expect(r.body.error.message).toMatch(/disk/);
    const st = await getState(h, id);
    expect(st.status).toBe('offline');
    expect(st.reason).toBe('disk_limit');
    await waitFor(() => h.panel.eventsFor(id).some((e) => e.reason === 'disk_limit'), 'disk_limit event');
    // restart is refused the same way
    expect((await power(h, id, 'restart')).body.error.code).toBe('DISK_LIMIT');
  });

  test('disk limit while running: the server is stopped with reason disk_limit', async () => {
    const id = newId();
    await createServer(h, demoSpec(id, { disk: 5 }));
    await startRunning(h, id);
    writeFileSync(path.join(h.dataDir, 'agent', 'servers', id, 'grow.bin'), Buffer.alloc(6 * 1024 * 1024));
    const st = await waitStatus(h, id, 'offline');
    expect(st.reason).toBe('disk_limit');
    expect((await logs(h, id)).some((l) => l.includes('Saving worlds'))).toBe(true); // stopped gracefully
  });

  test('restart works from offline, starting, running and stopping', async () => {
    const id = newId();
    await createServer(h, demoSpec(id));
    // offline → restart = start
    let r = await power(h, id, 'restart');
    expect(r.status).toBe(200);
    expect(r.body.data.status).toBe('starting');
    // starting → restart
    r = await power(h, id, 'restart');
    expect(r.status).toBe(200);
    expect(r.body.data.status).toBe('stopping');
    await waitStatus(h, id, 'running');
    // running → restart
    const before = h.panel.eventsFor(id).length;
    r = await power(h, id, 'restart');
    expect(r.body.data.status).toBe('stopping');
    await waitFor(() => h.panel.eventsFor(id).slice(before).some((e) => e.status === 'running'), 'running after restart');
    // stopping → restart
    r = await power(h, id, 'stop');
    expect(r.body.data.status).toBe('stopping');
    r = await power(h, id, 'restart');
    expect(r.status).toBe(200);
    expect(r.body.data.status).toBe('stopping');
    await waitStatus(h, id, 'running');
    // stop on offline / stopping is a no-op; start on stopping is INVALID_STATE; stop cancels a pending restart
    r = await power(h, id, 'restart');
    expect(r.body.data.status).toBe('stopping');
    expect(r.body.data.status).toBe('stopping');
    r = await power(h, id, 'stop');
    expect(r.status).toBe(200);
    expect(r.body.data.status).toBe('stopping');
    r = await power(h, id, 'start');
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe('INVALID_STATE');
    await waitStatus(h, id, 'offline');
    r = await power(h, id, 'stop');
    expect(r.body.data.status).toBe('offline');
  });

  test('stop falls back to SIGKILL after the grace period', async () => {
    const id = newId();
    // ignores the stop command and SIGTERM
    await createServer(h, {
      ...demoSpec(id),
      startup: `/bin/sh -c "trap '' TERM; echo up; while true; do sleep 0.2; done"`,
      ready: null,
      stop: 'SIGTERM',
      install: null,
    });
    await startRunning(h, id);
    // running at once (no ready line), but the trap is set only once the shell prints "up"
    await waitFor(async () => (await logs(h, id)).includes('up'), 'the trap to be set');
    const t0 = Date.now();
    await power(h, id, 'stop');
    const st = await waitStatus(h, id, 'offline', 10000);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(2500);
    expect(st.reason).toBe('stopped');
    expect((await logs(h, id)).some((l) => l.includes('did not stop within 3 s'))).toBe(true);
  });

  test('install failure → install_failed; start refused; reinstall; delete', async () => {
    const id = newId();
    const r = await h.request('PUT', `/api/servers/${id}`, { ...demoSpec(id), install: 'echo failing; exit 5' });
    expect(r.status).toBe(200);
    const st = await waitStatus(h, id, 'install_failed');
    expect(st.exitCode).toBe(5);
    expect((await power(h, id, 'start')).body.error.code).toBe('INVALID_STATE');
    // fix the spec, reinstall
    expect((await h.request('PUT', `/api/servers/${id}`, demoSpec(id))).status).toBe(200);
    const re = await h.request('POST', `/api/servers/${id}/reinstall`);
    expect(re.status).toBe(200);
    expect(re.body.data.status).toBe('installing');
    await waitStatus(h, id, 'offline');
    await startRunning(h, id);
    const del = await h.request('DELETE', `/api/servers/${id}`);
    expect(del.status).toBe(204);
    expect((await h.request('GET', `/api/servers/${id}`)).status).toBe(404);
  });
});

describe('a server that does not read its input', () => {
  test('commands are refused with INVALID_STATE once a bounded backlog waits, instead of piling up in the agent', async () => {
    const id = newId();
    await createServer(h, specFor('shell-command', id, {}, { COMMAND: 'exec sleep 100000' }));
    await startRunning(h, id);
    const command = 'x'.repeat(4000);
    let accepted = 0;
    let refusal: { status: number; body: any } | null = null;
    for (let i = 0; i < 400 && !refusal; i++) {
      const r = await h.request('POST', `/api/servers/${id}/commands`, { command });
      if (r.status === 200 || r.status === 204) accepted++;
      else refusal = r;
    }
    expect(refusal?.status).toBe(422);
    expect(refusal?.body.error).toMatchObject({ code: 'INVALID_STATE', message: expect.stringContaining('not reading its input') });
    // what was accepted fits the backlog (256 KiB) plus the pipe's own buffer
    expect(accepted * 4001).toBeLessThan(256 * 1024 + 1024 * 1024);
    expect((await power(h, id, 'kill')).status).toBe(200);
    await waitStatus(h, id, 'offline');
  }, 30_000);
});

describe('who a server runs as', () => {
  const asRoot = process.getuid?.() === 0;

  test(asRoot ? 'an agent running as root runs each server as its own unprivileged user, kept out of the secrets and of other servers' : 'an agent that is not root runs servers as itself', async () => {
    writeFileSync(path.join(h.dataDir, 'secret.txt'), 'the master key', { mode: 0o600 });
    await createServer(h, demoSpec(newId())); // one install log at least
    const other = newId();
    await createServer(h, specFor('shell-command', other, {}, { COMMAND: 'echo other > mine.txt; exec sleep 100000' }));
    await startRunning(h, other);
    const id = newId();
    const probe = [
      'echo "uid=$(id -u)"',
      'cat ../../../secret.txt 2>/dev/null && echo READ-SECRET || echo cannot-read-secret',
      'cat ../../state.json >/dev/null 2>&1 && echo READ-STATE || echo cannot-read-state',
      `cat ../${other}/mine.txt 2>/dev/null && echo READ-OTHER || echo cannot-read-other`,
      'ls .. >/dev/null 2>&1 && echo LISTED-SERVERS || echo cannot-list-servers',
      'echo mine > own.txt && echo wrote-own',
      'ls ../../install-logs >/dev/null 2>&1 && echo LISTED-INSTALL-LOGS || echo cannot-list-install-logs',
      `cat ${path.join(h.dataDir, 'agent', 'assets', 'demo-game.js')} >/dev/null && echo read-assets`,
      'exec sleep 100000',
    ].join('; ');
    await createServer(h, specFor('shell-command', id, {}, { COMMAND: probe }));
    await startRunning(h, id);
    const out = await waitFor(async () => {
      const l = await logs(h, id);
      return l.some((x) => x.includes('read-assets') || x.includes('No such file')) ? l : null;
    }, 'the probe to finish');
    const uid = Number(/uid=(\d+)/.exec(out.join('\n'))?.[1]);
    if (asRoot) {
      expect(uid).toBeGreaterThanOrEqual(SERVER_UID_BASE);
      expect(out).toEqual(expect.arrayContaining(['cannot-read-secret', 'cannot-read-state', 'cannot-read-other', 'cannot-list-servers', 'wrote-own', 'cannot-list-install-logs', 'read-assets']));
    } else {
      expect(uid).toBe(process.getuid?.());
    }
    for (const s of [id, other]) {
      expect((await power(h, s, 'kill')).status).toBe(200);
      await waitStatus(h, s, 'offline');
    }
  }, 30_000);
});
