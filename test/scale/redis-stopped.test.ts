/**
 * Shutting down while Redis hangs (a Redis of our own, stopped with SIGSTOP: connected, answering
 * nothing): closing the console bus, and the whole platform, must finish instead of waiting for
 * Redis (src/main.ts would kill the process after 60 s, leaving the database pool open); and once
 * Redis answers again, a change of rights published during the hang still reaches the other
 * instances (the bus stops writing to a Redis that timed out until it answers a PING). Runs its
 * own `redis-server` on a free port, without persistence; without `redis-server` installed the test
 * is skipped (and says so). The machine's Redis (REDIS_URL) is never touched.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import net from 'node:net';
import type { ConsoleBus } from '../../src/console/bus.js';
import { RedisBus } from '../../src/console/redis-bus.js';
import { accessChanged } from '../../src/console/types.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { freePort, sleep, until } from '../support/wait.js';

/** Generous: a hang check, not a timing requirement. */
const CLOSE_BOUND_MS = 15_000;

function hasRedisServer(): boolean {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
const installed = hasRedisServer();
if (!installed) console.warn('SKIPPED test/scale/redis-stopped.test.ts: redis-server is not installed (apt-get install redis-server), so there is no Redis of our own to stop.');
const describeOwnRedis = installed ? describe : describe.skip;

/** Whether both connections of a bus are up (so that a flush is sent to Redis, not dropped as "not connected"). */
const connected = (bus: ConsoleBus) => {
  const { pub, sub } = bus as unknown as { pub: { status: string }; sub: { status: string } };
  return pub.status === 'ready' && sub.status === 'ready';
};

/** 'closed' once `close` has finished, or 'still closing' after CLOSE_BOUND_MS. */
async function finishes(close: Promise<unknown>): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const started = Date.now();
  try {
    return await Promise.race([close.then(() => 'closed'), new Promise<string>((r) => (timer = setTimeout(() => r(`still closing after ${CLOSE_BOUND_MS} ms`), CLOSE_BOUND_MS)))]);
  } finally {
    clearTimeout(timer);
    console.log(`closing took ${Date.now() - started} ms`);
  }
}

describeOwnRedis('shutdown while Redis hangs (SIGSTOP)', () => {
  let port = 0;
  let redis: ChildProcess | null = null;
  let url = '';
  const buses: RedisBus[] = [];
  let platform: TestPlatform | null = null;

  beforeAll(async () => {
    port = await freePort();
    redis = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no', '--bind', '127.0.0.1'], { stdio: 'ignore' });
    await until(
      () =>
        new Promise<boolean>((r) => {
          const s = net.connect(port, '127.0.0.1', () => (s.destroy(), r(true)));
          s.on('error', () => r(false));
        }),
      10_000,
      'our redis-server up',
    );
    url = `redis://127.0.0.1:${port}`;
  }, 30_000);

  afterEach(() => {
    // whatever a test left, Redis answers again (a close still under way then finishes)
    redis?.kill('SIGCONT');
  });

  afterAll(async () => {
    if (redis) {
      redis.kill('SIGCONT');
      redis.kill('SIGKILL');
    }
    for (const b of buses) await b.close().catch(() => undefined);
    await platform?.stop().catch(() => undefined);
  }, 60_000);

  test('the console bus closes although a flush to Redis is under way and unanswered', async () => {
    const bus = new RedisBus(url, 'stopped-' + randomBytes(3).toString('hex'));
    buses.push(bus);
    const serverId = randomUUID();
    await until(() => connected(bus), 10_000, 'the bus connected');
    await bus.appendHistory(serverId, { type: 'console_output', data: { line: 'before the hang' } });
    await until(async () => (await bus.history(serverId)).length === 1, 10_000, 'the line in the history');

    redis!.kill('SIGSTOP');
    // one console line and one change of rights (held until Redis takes it): a flush starts and gets no answer
    await bus.appendHistory(serverId, { type: 'console_output', data: { line: 'during the hang' } });
    await bus.publish(serverId, { type: 'console_output', data: { line: 'during the hang' } });
    await bus.publish(serverId, accessChanged(randomUUID()));
    await sleep(100);
    expect(await finishes(bus.close())).toBe('closed');
  }, 60_000);

  test('after the hang, a change of rights published during it reaches the other instances', async () => {
    const ns = 'stopped-' + randomBytes(3).toString('hex');
    const a = new RedisBus(url, ns);
    const b = new RedisBus(url, ns);
    buses.push(a, b);
    const serverId = randomUUID();
    const got: unknown[] = [];
    await until(() => connected(a) && connected(b), 10_000, 'both buses connected');
    await b.subscribe(serverId, (e) => got.push(e));
    redis!.kill('SIGSTOP');
    const change = accessChanged(randomUUID());
    await a.publish(serverId, change);
    // past the publishing connection's command timeout: that flush has failed, the event is held
    await sleep(6_000);
    redis!.kill('SIGCONT');
    await until(() => got.some((e) => JSON.stringify(e) === JSON.stringify(change)), 20_000, 'the change of rights on the other bus');
  }, 60_000);

  test('a platform stops although Redis hangs under its console bus', async () => {
    platform = await startTestPlatform({}, { REDIS_URL: url + '/2', MASTER_KEY: randomBytes(32).toString('base64') });
    const bus = (platform.services.console as unknown as { bus: ConsoleBus }).bus;
    expect(bus).toBeInstanceOf(RedisBus);
    await until(() => connected(bus), 10_000, "the platform's bus connected");
    redis!.kill('SIGSTOP');
    await bus.publish(randomUUID(), accessChanged(randomUUID()));
    await sleep(100);
    const p = platform;
    expect(await finishes(p.stop())).toBe('closed');
    platform = null;
  }, 60_000);
});
