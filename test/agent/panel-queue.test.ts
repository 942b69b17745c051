/**
 * The agent's event queue (src/agent/panel-client.ts) against a small fake panel over real HTTP:
 * - a batch the panel answered is taken out by identity: an overflow while it was in flight (its
 *   oldest event dropped) does not make an event that was never sent go instead (acknowledged, or
 *   rejected with a 400);
 * - over its limit the queue drops the oldest state events first: a backup's end report survives a
 *   long outage (in memory, in the file, and at load), and reaches the panel after a restart.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PanelClient, REPORT_GATHER_MS } from '../../src/agent/panel-client';
import type { AgentEvent, BackupReport, ServerStateEvent } from '../../src/shared/node-protocol';
import { tmpDir } from './helpers';

const nodeKey = Buffer.alloc(32, 7);
const nodeId = '00000000-0000-4000-8000-000000000001';

interface FakePanel {
  url: string;
  received: AgentEvent[];
  close(): Promise<void>;
}

/** A panel that hands each POST's events to `answer` (which ends the response, at once or later). */
async function fakePanel(answer: (events: AgentEvent[], res: http.ServerResponse) => void): Promise<FakePanel> {
  const received: AgentEvent[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const events = (JSON.parse(body) as { events: AgentEvent[] }).events;
      received.push(...events);
      answer(events, res);
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const state = (i: number): ServerStateEvent => ({ serverId: `s${i}`, status: 'running', at: new Date().toISOString() });
const backupEnd = (): BackupReport => ({ kind: 'backup', serverId: 'sb', backupId: 'b1', status: 'completed', files: 1, bytes: 1, sha256: 'x', at: new Date().toISOString() });
const ids = (events: AgentEvent[]) => events.map((e) => ('kind' in e ? `${e.kind}:${e.serverId}` : e.serverId));
const fileIds = (file: string) => (existsSync(file) ? ids(readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as AgentEvent)) : []);

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!cond()) throw new Error('condition not met');
}

let dir: string;
beforeEach(() => {
  dir = tmpDir('hp-panel-queue-');
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe.each([
  ['acknowledged', 204],
  ['rejected (400)', 400],
])('a batch %s while the queue overflowed', (_name, firstAnswer) => {
  test('is taken out exactly: every event queued after it and not dropped as oldest reaches the panel', async () => {
    let release: (() => void) | null = null;
    const p = await fakePanel((_events, res) => {
      if (p.received.length === 1) release = () => res.writeHead(firstAnswer).end();
      else res.writeHead(204).end();
    });
    const file = path.join(dir, 'agent', 'panel-queue.jsonl');
    const client = new PanelClient({ panelUrl: p.url, nodeId, nodeKey, maxQueue: 2, queueFile: file, minBackoffMs: 10 });
    try {
      client.enqueue(state(1)); // sent at once; the panel holds its answer
      await until(() => release !== null);
      client.enqueue(state(2));
      client.enqueue(state(3)); // over the limit: s1, in flight, is dropped as the oldest
      expect(client.pending).toBe(2);
      release!();
      expect(await client.drain(5000)).toBe(true);
      expect(ids(p.received)).toEqual(['s1', 's2', 's3']);
      expect(fileIds(file)).toEqual([]);
    } finally {
      client.close();
      await p.close();
    }
  });
});

test('a backup end report queued before a long outage is not pushed out by state events, and reaches the panel after a restart', async () => {
  let down = true;
  const p = await fakePanel((_events, res) => res.writeHead(down ? 503 : 204).end());
  const file = path.join(dir, 'agent', 'panel-queue.jsonl');
  const opts = { panelUrl: p.url, nodeId, nodeKey, maxQueue: 50, queueFile: file, minBackoffMs: 60_000 };
  const client = new PanelClient(opts);
  try {
    client.enqueue(backupEnd());
    // a server that restarts now and then while the panel is down
    for (let i = 0; i < 200; i++) client.enqueue(state(i));
    expect(client.pending).toBe(50);
    expect(fileIds(file)).toContain('backup:sb');
    await until(() => p.received.length > 0); // the panel answered the first attempt with a 503
    client.close();
    expect(fileIds(file)).toContain('backup:sb');

    // the agent starts again; the panel is back
    down = false;
    p.received.length = 0;
    const again = new PanelClient(opts);
    try {
      expect(await again.drain(5000)).toBe(true);
      const expected = ['backup:sb', ...Array.from({ length: 49 }, (_, i) => `s${151 + i}`)];
      expect(ids(p.received)).toEqual(expected);
    } finally {
      again.close();
    }
  } finally {
    client.close();
    await p.close();
  }
});

test('a queue file over the limit at load keeps its reports: the oldest state events are dropped', () => {
  const file = path.join(dir, 'agent', 'panel-queue.jsonl');
  mkdirSync(path.dirname(file), { recursive: true });
  const events: AgentEvent[] = [state(0), backupEnd(), ...Array.from({ length: 200 }, (_, i) => state(i + 1))];
  writeFileSync(file, events.map((e) => JSON.stringify(e) + '\n').join(''));
  const client = new PanelClient({ panelUrl: 'http://127.0.0.1:1', nodeId, nodeKey, maxQueue: 50, queueFile: file, sendAtOnce: false });
  try {
    expect(client.pending).toBe(50);
    expect(fileIds(file)).toEqual(['backup:sb', ...Array.from({ length: 49 }, (_, i) => `s${152 + i}`)]);
  } finally {
    client.close();
  }
});

test('a queue of reports only: over the limit the oldest reports go (nothing else is left to drop)', () => {
  const file = path.join(dir, 'agent', 'panel-queue.jsonl');
  const client = new PanelClient({ panelUrl: 'http://127.0.0.1:1', nodeId, nodeKey, maxQueue: 3, queueFile: file, sendAtOnce: false });
  try {
    client.enqueue(state(0));
    for (let i = 1; i <= 4; i++) client.enqueue({ ...backupEnd(), serverId: `r${i}` });
    expect(client.pending).toBe(3);
    client.close();
    const again = new PanelClient({ panelUrl: 'http://127.0.0.1:1', nodeId, nodeKey, maxQueue: 3, queueFile: file, sendAtOnce: false });
    again.close();
    expect(fileIds(file)).toEqual(['backup:r2', 'backup:r3', 'backup:r4']);
  } finally {
    client.close();
  }
});

const command = (i: number): AgentEvent => ({ kind: 'activity', serverId: 'sa', userId: 'u1', event: 'server:console.command', properties: { command: `spam ${i}` }, ip: '127.0.0.1', at: new Date().toISOString() });

describe('activity reports wait for company', () => {
  test('a command every 10 ms for 200 ms reaches the panel in a few requests, every report once and in order', async () => {
    let requests = 0;
    const p = await fakePanel((_events, res) => {
      requests++;
      res.writeHead(204).end();
    });
    const client = new PanelClient({ panelUrl: p.url, nodeId, nodeKey, queueFile: path.join(dir, 'q.jsonl') });
    try {
      const start = performance.now();
      for (let i = 0; i < 20; i++) {
        client.enqueue(command(i));
        await new Promise((r) => setTimeout(r, 10));
      }
      await until(() => p.received.length === 20);
      const elapsed = performance.now() - start;
      expect(p.received.map((e) => ('properties' in e ? e.properties.command : null))).toEqual(Array.from({ length: 20 }, (_, i) => `spam ${i}`));
      // one request per command before; now one per REPORT_GATHER_MS window (each starts after the last
      // request, so they fit the time the loop took, however slow the machine made it), and one more
      expect(requests).toBeLessThanOrEqual(Math.floor(elapsed / REPORT_GATHER_MS) + 2);
    } finally {
      client.close();
      await p.close();
    }
  });

  test('reports made while a request is under way wait for company too, however slowly the panel answers', async () => {
    // the panel takes 100 ms a request: the reports typed meanwhile went at its answer, 90 ms old, one
    // request after another, as if there were no gathering
    const ages: number[] = [];
    const p = await fakePanel((events, res) => {
      const oldest = Math.min(...events.map((e) => Date.parse((e as { at: string }).at)));
      ages.push(Date.now() - oldest);
      setTimeout(() => res.writeHead(204).end(), 100);
    });
    const client = new PanelClient({ panelUrl: p.url, nodeId, nodeKey, queueFile: path.join(dir, 'slow.jsonl') });
    try {
      for (let i = 0; i < 60; i++) {
        client.enqueue(command(i));
        await new Promise((r) => setTimeout(r, 10));
      }
      await until(() => p.received.length === 60);
      expect(p.received.map((e) => ('properties' in e ? e.properties.command : null))).toEqual(Array.from({ length: 60 }, (_, i) => `spam ${i}`));
      // a request goes when its oldest report has waited REPORT_GATHER_MS (timers are never early; the
      // timestamps are to the millisecond)
      expect(ages.filter((age) => age < REPORT_GATHER_MS - 2)).toEqual([]);
    } finally {
      client.close();
      await p.close();
    }
  });

  test('a state change does not wait: it goes at once, and takes the gathered reports with it', async () => {
    const p = await fakePanel((_events, res) => res.writeHead(204).end());
    const client = new PanelClient({ panelUrl: p.url, nodeId, nodeKey, reportGatherMs: 600_000 });
    try {
      client.enqueue(command(1));
      client.enqueue(state(1));
      await until(() => p.received.length === 2);
      expect(ids(p.received)).toEqual(['activity:sa', 's1']);
    } finally {
      client.close();
      await p.close();
    }
  });

  test('drain sends the gathered reports without waiting out the gather time', async () => {
    const p = await fakePanel((_events, res) => res.writeHead(204).end());
    const client = new PanelClient({ panelUrl: p.url, nodeId, nodeKey, reportGatherMs: 600_000 });
    try {
      client.enqueue(command(1));
      expect(await client.drain(5000)).toBe(true);
      expect(ids(p.received)).toEqual(['activity:sa']);
    } finally {
      client.close();
      await p.close();
    }
  });
});
