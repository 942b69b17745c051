/**
 * GraphQL `consoleBatches`: the history as one batch, then the live lines in batches (far fewer
 * messages than lines, in order, none lost or repeated), the lines the node dropped over its output
 * budget counted in `skipped`, every subscriber of one document sent the same payload bytes. Real demo server, real sockets.
 */
import WebSocket from 'ws';
import { ConsoleClient } from '../support/console-client.js';
import { blueprintsByKey, localNodeId, waitForStatus } from '../support/fixtures.js';
import { gqlWsClient, subscribe } from '../support/gql-ws.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { until } from '../support/wait.js';

const BATCHES = 'subscription($id: ID!) { consoleBatches(serverId: $id) { serverId skipped lines { line stream seq } } }';
let p: TestPlatform;
let owner: { token: string };
let serverId: string;

beforeAll(async () => {
  // an output budget the spam below goes well over
  p = await startTestPlatform({ localAgent: true, agentPort: 0, stopGraceSeconds: 3, consoleMaxLinesPerSecond: 1000 });
  owner = await p.newUser('Owner');
  const admin = await p.admin();
  const nodeId = await localNodeId(p, admin.token);
  const demo = (await blueprintsByKey(p, owner.token))['demo-game'];
  const created = await p.request('POST', '/api/v1/servers', { token: owner.token, body: { name: 'batches', nodeId, blueprintId: demo.id } });
  serverId = created.body.data.id;
  await waitForStatus(p, owner.token, serverId, 'offline');
  await p.request('POST', `/api/v1/servers/${serverId}/start`, { token: owner.token });
  await waitForStatus(p, owner.token, serverId, 'running');
}, 90_000);

afterAll(async () => {
  await p?.request('POST', `/api/v1/servers/${serverId}/kill`, { token: owner.token });
  await p?.stop();
}, 60_000);

/** A graphql-ws subscriber spoken by hand, recording the raw `next` messages. */
async function rawSubscriber(id: string): Promise<{ ws: WebSocket; frames: string[] }> {
  const ws = new WebSocket(p.url.replace(/^http/, 'ws') + '/graphql', 'graphql-transport-ws');
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${owner.token}` } }));
  await new Promise<void>((resolve) => ws.once('message', () => resolve())); // connection_ack
  const frames: string[] = [];
  ws.on('message', (d) => frames.push(String(d)));
  ws.send(JSON.stringify({ id, type: 'subscribe', payload: { query: BATCHES, variables: { id: serverId } } }));
  return { ws, frames };
}

const spamIndex = (line: string): number | null => {
  const m = / #(\d+)$/.exec(line);
  return m ? Number(m[1]) : null;
};

test('history first, then every live line once and in order, in few batches', async () => {
  const client = gqlWsClient(p.url, owner.token);
  const sub = subscribe(client, BATCHES, { id: serverId });
  // the history first: the node's replay of its recent lines when the gateway's feed opens
  await until(() => sub.items.some((d) => d.consoleBatches.lines.some((l: { line: string }) => /Done \(/.test(l.line))), 10_000, 'the history');
  expect(sub.items[0].consoleBatches.serverId).toBe(serverId);
  const historyBatches = sub.items.length;

  const t = await p.request('GET', `/api/v1/servers/${serverId}/console-token`, { token: owner.token });
  const node = await ConsoleClient.connect(t.body.data.socket, t.body.data.token);
  node.send({ type: 'command', data: 'spam 800' });
  const spam = () => sub.items.flatMap((d) => d.consoleBatches.lines).map((l: { line: string }) => spamIndex(l.line)).filter((k: number | null) => k !== null);
  await until(() => spam().length >= 800, 20_000, '800 spam lines');
  expect(spam()).toEqual(Array.from({ length: 800 }, (_, i) => i + 1));
  const batches = sub.items.slice(historyBatches).map((d) => d.consoleBatches);
  // 800 lines printed at once arrive in a handful of messages, not one each
  expect(batches.length).toBeLessThan(100);
  const seqs = batches.flatMap((b) => b.lines.map((l: { seq: number }) => l.seq));
  expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
  expect(new Set(seqs).size).toBe(seqs.length);
  expect(sub.errors).toEqual([]);
  sub.stop();
  await client.dispose();
  node.ws.close();
}, 60_000);

test('two subscribers of one document get the same payload bytes; the subscription ends on complete', async () => {
  const a = await rawSubscriber('a');
  const b = await rawSubscriber('b-2');
  await until(() => p.services.console.hub.subscriberCount(serverId) > 0 && a.frames.length > 0 && b.frames.length > 0, 10_000, 'both histories');
  const t = await p.request('GET', `/api/v1/servers/${serverId}/console-token`, { token: owner.token });
  const node = await ConsoleClient.connect(t.body.data.socket, t.body.data.token);
  node.send({ type: 'command', data: 'say same-bytes' });
  const payloads = (frames: string[], id: string) =>
    frames.filter((f) => f.includes('same-bytes')).map((f) => {
      const prefix = `{"id":${JSON.stringify(id)},"type":"next","payload":`;
      expect(f.startsWith(prefix)).toBe(true);
      return f.slice(prefix.length, -1);
    });
  await until(() => payloads(a.frames, 'a').length > 0 && payloads(b.frames, 'b-2').length > 0, 10_000, 'the line at both');
  expect(payloads(a.frames, 'a')).toEqual(payloads(b.frames, 'b-2'));
  expect(JSON.parse(payloads(a.frames, 'a')[0]!).data.consoleBatches.lines.map((l: { line: string }) => l.line)).toContainEqual(expect.stringMatching(/same-bytes$/));

  a.ws.send(JSON.stringify({ id: 'a', type: 'complete' }));
  b.ws.send(JSON.stringify({ id: 'b-2', type: 'complete' }));
  await until(() => p.services.console.hub.subscriberCount(serverId) === 0, 10_000, 'the subscriptions to end');
  a.ws.close();
  b.ws.close();
  node.ws.close();
}, 60_000);

test('lines over the output budget are counted in skipped: received + skipped = printed', async () => {
  const client = gqlWsClient(p.url, owner.token);
  const sub = subscribe(client, BATCHES, { id: serverId });
  await until(() => sub.items.length > 0, 10_000, 'the history batch');
  const start = sub.items.length;
  const t = await p.request('GET', `/api/v1/servers/${serverId}/console-token`, { token: owner.token });
  const node = await ConsoleClient.connect(t.body.data.socket, t.body.data.token);
  // 6,000 lines at once against 1,000 a second: most are dropped
  node.send({ type: 'command', data: 'say before-flood' });
  await until(() => sub.items.some((d) => d.consoleBatches.lines.some((l: { line: string }) => l.line.endsWith('before-flood'))), 10_000, 'the line before');
  const first = (() => {
    const all = sub.items.flatMap((d) => d.consoleBatches.lines).map((l: { line: string }) => spamIndex(l.line)).filter((k: number | null) => k !== null);
    return all.length ? Math.max(...(all as number[])) : 0;
  })();
  node.send({ type: 'command', data: 'spam 6000' });
  const live = () => sub.items.slice(start).map((d) => d.consoleBatches);
  const received = () => live().flatMap((b) => b.lines).map((l: { line: string }) => spamIndex(l.line)).filter((k: number | null) => k !== null && k > first);
  const skippedSum = () => live().reduce((n, b) => n + b.skipped, 0);
  await until(() => received().length + skippedSum() >= 6000, 20_000, 'every spam line received or counted');
  // nothing more comes: no line is counted twice
  await new Promise((r) => setTimeout(r, 500));
  const skipped = skippedSum();
  expect(skipped).toBeGreaterThan(3000);
  expect(received().length + skipped).toBe(6000);
  expect(new Set(received()).size).toBe(received().length);
  sub.stop();
  await client.dispose();
  node.ws.close();
}, 60_000);

test('a burst of long lines reaches consoleBatches whole (the node splits it into frames the feed takes)', async () => {
  const client = gqlWsClient(p.url, owner.token);
  const sub = subscribe(client, BATCHES, { id: serverId });
  await until(() => sub.items.length > 0, 10_000, 'the history');
  await new Promise((r) => setTimeout(r, 1500)); // the output budget refills
  const t = await p.request('GET', `/api/v1/servers/${serverId}/console-token`, { token: owner.token });
  const node = await ConsoleClient.connect(t.body.data.socket, t.body.data.token);
  const start = sub.items.length;
  // 600 lines of 4,000 characters at once: 2.4 MB within one 50 ms batch of the node
  node.send({ type: 'command', data: 'spam 600 4000' });
  const long = () => sub.items.slice(start).flatMap((d) => d.consoleBatches.lines).filter((l: { line: string }) => l.line.length > 3000 && spamIndex(l.line) !== null);
  await until(() => long().length >= 600, 20_000, '600 long lines');
  const ks = long().map((l: { line: string }) => spamIndex(l.line)!);
  expect(ks.slice(1).every((k: number, i: number) => k === ks[i]! + 1)).toBe(true);
  expect(sub.items.slice(start).reduce((n, d) => n + d.consoleBatches.skipped, 0)).toBe(0);
  sub.stop();
  await client.dispose();
  node.ws.close();
}, 60_000);
