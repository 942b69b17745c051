import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import WebSocket from 'ws';
import { signRequest } from '../../src/shared/node-protocol';
import { ServerCgroups, enforcedLimits } from '../../src/agent/environment/cgroup';
import { createServer, demoSpec, newId, specFor, startHarness, startRunning, tmpDir, waitFor, waitStatus, type Harness } from './helpers';

const hasOpenssl = (() => {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

(hasOpenssl ? describe : describe.skip)('TLS (https API + wss console)', () => {
  let h: Harness;
  let certDir: string;
  let cert: string;
  beforeAll(async () => {
    certDir = tmpDir('hp-agent-cert-');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'key.pem', '-out', 'cert.pem', '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1'], {
      cwd: certDir,
      stdio: 'ignore',
    });
    cert = readFileSync(path.join(certDir, 'cert.pem'), 'utf8');
    h = await startHarness({}, { tls: { cert, key: readFileSync(path.join(certDir, 'key.pem'), 'utf8') } });
  });
  afterAll(async () => {
    expect(await h?.close()).toEqual([]);
    rmSync(certDir, { recursive: true, force: true });
  });

  test('signed API over https and console over wss', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = https.request(
        { host: '127.0.0.1', port: h.agent.port, path: '/api/system', method: 'GET', ca: cert, headers: { authorization: signRequest(h.nodeId, h.nodeKey, 'GET', '/api/system') } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(200);
    const id = newId();
    const put = await new Promise<number>((resolve, reject) => {
      const body = JSON.stringify(demoSpec(id));
      const req = https.request(
        {
          host: '127.0.0.1',
          port: h.agent.port,
          path: `/api/servers/${id}`,
          method: 'PUT',
          ca: cert,
          headers: { 'content-type': 'application/json', authorization: signRequest(h.nodeId, h.nodeKey, 'PUT', `/api/servers/${id}`, body) },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
    expect(put).toBe(200);
    const ws = new WebSocket(`wss://127.0.0.1:${h.agent.port}/console`, { ca: cert });
    const first = await new Promise<any>((resolve, reject) => {
      ws.on('open', () => ws.send(JSON.stringify({ type: 'auth', token: h.token(id) })));
      ws.on('message', (d) => resolve(JSON.parse(d.toString())));
      ws.on('error', reject);
    });
    expect(first.type).toBe('auth_success');
    ws.terminate();
  });
});

describe('cpu limit', () => {
  const mechanism = enforcedLimits().cpuMechanism;
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    expect(await h?.close()).toEqual([]);
  });

  test(`applied through cgroups when available (here: ${mechanism})`, async () => {
    const id = newId();
    await createServer(h, demoSpec(id, { cpu: 50 }));
    await startRunning(h, id);
    const dir = new ServerCgroups().groupDir(id);
    if (mechanism === 'cgroup-v1') {
      expect(readFileSync(path.join(dir!, 'cpu.cfs_quota_us'), 'utf8').trim()).toBe('50000');
      expect(readFileSync(path.join(dir!, 'cpu.cfs_period_us'), 'utf8').trim()).toBe('100000');
      const procs = readFileSync(path.join(dir!, 'cgroup.procs'), 'utf8').trim().split('\n').map(Number);
      const pid = await waitFor(() => JSON.parse(readFileSync(path.join(h.dataDir, 'agent', 'state.json'), 'utf8')).servers[id]?.pid as number, 'pid in state.json');
      expect(procs).toContain(pid);
    } else if (mechanism === 'cgroup-v2') {
      expect(readFileSync(path.join(dir!, 'cpu.max'), 'utf8').trim()).toBe('50000 100000');
    } else {
      expect(dir).toBeNull();
    }
    await h.request('POST', `/api/servers/${id}/power`, { action: 'kill' });
    if (dir) expect(existsSync(dir)).toBe(false); // released when the process is gone
  });

  /** Pids of the processes working in a directory (their cwd), from /proc. */
  function processesIn(dir: string): number[] {
    return readdirSync('/proc')
      .filter((n) => /^\d+$/.test(n))
      .filter((n) => {
        try {
          return readlinkSync(`/proc/${n}/cwd`) === dir;
        } catch {
          return false;
        }
      })
      .map(Number);
  }

  const withCgroups = mechanism === 'none' ? test.skip : test;
  if (mechanism === 'none') console.warn('SKIPPED the cgroup containment tests of test/agent/tls-limits.test.ts: no writable cgroup cpu controller here');

  withCgroups('processes the command forks at once are in the cgroup too (none escapes the cpu limit)', async () => {
    const id = newId();
    await createServer(h, specFor('shell-command', id, { cpu: 20 }, { COMMAND: 'sleep 1000 & sleep 1000 & sh -c "sleep 1000" & wait' }));
    await startRunning(h, id);
    const serverDir = path.join(h.dataDir, 'agent', 'servers', id);
    const inDir = await waitFor(() => (processesIn(serverDir).length >= 4 ? processesIn(serverDir) : null), 'the command and its children');
    const procs = readFileSync(path.join(new ServerCgroups().groupDir(id)!, 'cgroup.procs'), 'utf8').trim().split('\n').map(Number);
    expect(inDir.filter((pid) => !procs.includes(pid))).toEqual([]);
    await h.request('POST', `/api/servers/${id}/power`, { action: 'kill' });
    await waitStatus(h, id, 'offline');
  });

  withCgroups('a process that left the process group (setsid) is killed with the server, and on delete', async () => {
    const serverDirOf = (id: string) => path.join(h.dataDir, 'agent', 'servers', id);
    for (const action of ['kill', 'delete']) {
      const id = newId();
      await createServer(h, specFor('shell-command', id, {}, { COMMAND: 'setsid sleep 1000 & exec sleep 1000' }));
      await startRunning(h, id);
      const dir = serverDirOf(id);
      await waitFor(() => processesIn(dir).length >= 2, 'the server and its setsid child');
      if (action === 'kill') {
        await h.request('POST', `/api/servers/${id}/power`, { action: 'kill' });
        await waitStatus(h, id, 'offline');
      } else {
        expect((await h.request('DELETE', `/api/servers/${id}`)).status).toBe(204);
      }
      await waitFor(() => processesIn(dir).length === 0, `no process left in the server directory after ${action}`, 5000);
    }
  });
});
