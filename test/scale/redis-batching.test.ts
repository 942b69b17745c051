/**
 * The Redis console bus under a flood, with the machine's Redis: this instance's own subscribers get
 * every line without waiting for Redis (here Redis is made unresponsive to one instance by a TCP
 * proxy that stops forwarding), and what goes to Redis is batched, so another instance receives the
 * same lines in the same order in a few messages instead of one per line, and the shared history
 * holds the last 150 of them. Needs REDIS_URL; without it the test is skipped (and says so).
 */
import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { RedisBus } from '../../src/console/redis-bus.js';
import { HISTORY_LINES, type ConsoleEvent } from '../../src/console/types.js';
import { HoldingProxy } from '../support/redis-proxy.js';
import { until, sleep } from '../support/wait.js';
import { redisOnly } from '../support/redis-only.js';

const { redisUrl: REDIS_URL, describeRedis } = redisOnly('test/scale/redis-batching.test.ts', 'to batch to');

const lineOf = (e: ConsoleEvent) => String(e.data?.line);
/** Collects the lines only: a bus whose Redis connection comes up also has its subscribers re-check their rights (an `access` event). */
const linesInto = (into: string[]) => (e: ConsoleEvent) => void (e.type === 'console_output' && into.push(lineOf(e)));
const event = (line: string): ConsoleEvent => ({ type: 'console_output', data: { line, stream: 'stdout', ts: Date.now() } });

describeRedis('the Redis console bus under a flood', () => {
  const target = new URL(REDIS_URL);
  const proxy = new HoldingProxy({ host: target.hostname, port: Number(target.port || 6379) });
  let a: RedisBus;
  let b: RedisBus;
  let raw: Redis;

  beforeAll(async () => {
    await proxy.open();
    const viaProxy = new URL(REDIS_URL);
    viaProxy.host = `127.0.0.1:${proxy.port}`;
    a = new RedisBus(viaProxy.toString());
    b = new RedisBus(REDIS_URL);
    raw = new Redis(REDIS_URL);
  });
  afterAll(async () => {
    proxy.release();
    await a?.close();
    await b?.close();
    raw?.disconnect();
    await proxy.close();
  });

  test('local subscribers do not wait for Redis; other instances get the lines in order, batched; history keeps the last 150', async () => {
    const serverId = randomUUID();
    const atA: string[] = [];
    const atB: string[] = [];
    await a.subscribe(serverId, linesInto(atA));
    await b.subscribe(serverId, linesInto(atB));
    let messages = 0;
    await raw.subscribe(a.channelName(serverId));
    raw.on('message', () => messages++);

    // both instances are connected: a line from A reaches B through Redis
    const relay = (ev: ConsoleEvent) =>
      void (async () => {
        // as the hub relays each event of its upstream feed
        await a.appendHistory(serverId, ev);
        await a.publish(serverId, ev);
      })();
    // (until their connections are up, lines stay on the instance that relays them)
    await until(
      () => {
        relay(event('warm-up'));
        return atB.includes('warm-up');
      },
      10_000,
      'a warm-up line at B',
    );
    await sleep(200);
    atA.length = 0;
    atB.length = 0;
    messages = 0;

    proxy.hold();
    const lines = Array.from({ length: 300 }, (_, i) => `line ${i}`);
    for (const l of lines) relay(event(l));
    await until(() => atA.length === 300, 5_000, "A's own subscriber to get 300 lines while Redis does not answer A");
    expect(atA).toEqual(lines);
    expect(atB).toEqual([]);

    proxy.release();
    await until(() => atB.length === 300, 10_000, 'B to get the 300 lines once Redis answers again');
    expect(atB).toEqual(lines);
    expect(messages).toBeGreaterThan(0);
    expect(messages).toBeLessThanOrEqual(5); // one per flush, not one per line

    const history = (await b.history(serverId)).map(lineOf);
    expect(history).toEqual(lines.slice(-HISTORY_LINES));
  });

  test('two deployments on one Redis (another namespace, or another database number) keep their consoles apart', async () => {
    const serverId = randomUUID();
    const otherDb = new URL(REDIS_URL);
    otherDb.pathname = `/${(Number(otherDb.pathname.slice(1)) || 0) + 1}`;
    const staging = new RedisBus(REDIS_URL, 'staging');
    const elsewhere = new RedisBus(otherDb.toString());
    try {
      const atB: string[] = [];
      const atStaging: string[] = [];
      const atElsewhere: string[] = [];
      await b.subscribe(serverId, linesInto(atB));
      await staging.subscribe(serverId, linesInto(atStaging));
      await elsewhere.subscribe(serverId, linesInto(atElsewhere));
      await until(
        async () => {
          await staging.publish(serverId, event('from staging'));
          await elsewhere.publish(serverId, event('from another database'));
          await b.publish(serverId, event('from production'));
          return atStaging.includes('from staging') && atElsewhere.includes('from another database');
        },
        10_000,
        'each bus to be connected',
      );
      await sleep(300);
      expect(new Set(atB)).toEqual(new Set(['from production']));
      expect(new Set(atStaging)).toEqual(new Set(['from staging']));
      expect(new Set(atElsewhere)).toEqual(new Set(['from another database']));
      expect(staging.channelName(serverId)).not.toBe(b.channelName(serverId));
    } finally {
      await staging.close();
      await elsewhere.close();
    }
  });
});
