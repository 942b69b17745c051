/**
 * The gateway's console fan-out with the in-process bus (what Redis carries between instances is
 * published on it the same way): a line that reaches the hub twice is delivered once, a subscriber
 * joining while a line is on its way gets it once without taking it from the others, and a burst as
 * large as one Redis message can carry does not end a GraphQL subscriber.
 */
import { randomUUID } from 'node:crypto';
import { LocalBus } from '../../src/console/bus.js';
import { ConsoleHub } from '../../src/console/hub.js';
import { eventIterator, SUBSCRIBER_TOO_SLOW } from '../../src/console/iterator.js';
import { MAX_BATCH_EVENTS, type ConsoleEvent } from '../../src/console/types.js';
import { until } from '../support/wait.js';

const line = (seq: number, text = `line ${seq}`): ConsoleEvent => ({
  type: 'console_output',
  data: { line: text, stream: 'stdout', ts: new Date(1_700_000_000_000 + seq).toISOString(), seq },
});

describe('the console hub', () => {
  let bus: LocalBus;
  let hub: ConsoleHub;
  beforeEach(() => {
    bus = new LocalBus();
    // no node to reach here: the feed's ticket is refused, and it retries quietly in the background
    hub = new ConsoleHub(bus, () => Promise.reject(new Error('no node in this test')));
  });
  afterEach(async () => {
    await hub.close();
    await bus.close();
  });

  test('a line that arrives twice (from two feeds, or a replay of lines relayed before) is delivered once', async () => {
    const serverId = randomUUID();
    const got: string[] = [];
    const unsubscribe = await hub.subscribe(serverId, (e) => got.push(`${e.data.seq}:${e.data.line}`));
    for (const seq of [1, 2, 3]) await bus.publish(serverId, line(seq));
    // the same lines again, as the other instance's feed relays them through Redis, then a new one
    for (const seq of [2, 3, 4]) await bus.publish(serverId, line(seq));
    // the same text at another moment is another line
    await bus.publish(serverId, line(5, 'line 1'));
    // the hand-out is paced (src/shared/paced-queue.ts): on a busy machine it may finish a turn later
    await until(() => got.length >= 5 || null, 5_000, 'the lines');
    await new Promise((r) => setTimeout(r, 100)); // and nothing more after them
    expect(got).toEqual(['1:line 1', '2:line 2', '3:line 3', '4:line 4', '5:line 1']);
    // status and stats are not lines: repeated ones still go out
    const statuses: string[] = [];
    const second = await hub.subscribe(serverId, (e) => e.type === 'status' && statuses.push(e.data.status));
    await bus.publish(serverId, { type: 'status', data: { status: 'running' } });
    await bus.publish(serverId, { type: 'status', data: { status: 'running' } });
    await until(() => statuses.length >= 2 || null, 5_000, 'the statuses');
    expect(statuses).toEqual(['running', 'running']);
    unsubscribe();
    second();
  });

  /** What the feed does with a line: into the bus's history, then published. */
  async function relay(serverId: string, ev: ConsoleEvent): Promise<void> {
    await bus.appendHistory(serverId, ev);
    await bus.publish(serverId, ev);
  }
  const seqs = (events: ConsoleEvent[]) => events.flatMap((e) => (e.type === 'console_batch' ? e.data.lines.map((l: any) => l.seq) : e.type === 'console_output' ? [e.data.seq] : []));

  test('a subscriber joining between a line\u2019s entry in the history and its publication gets it once, and the others get it too', async () => {
    // the newcomer's history marked the line as delivered for the whole server: nobody got it live
    const serverId = randomUUID();
    const first: ConsoleEvent[] = [];
    const late: ConsoleEvent[] = [];
    const stops = [await hub.subscribe(serverId, (e) => first.push(e))];
    await relay(serverId, line(1));
    await bus.appendHistory(serverId, line(2));
    stops.push(await hub.subscribe(serverId, (e) => late.push(e)));
    await bus.publish(serverId, line(2));
    await relay(serverId, line(3));
    await until(() => (seqs(first).length >= 3 && seqs(late).length >= 3) || null, 5_000, 'the lines');
    await new Promise((r) => setTimeout(r, 100));
    expect({ first: seqs(first), late: seqs(late) }).toEqual({ first: [1, 2, 3], late: [1, 2, 3] });
    stops.forEach((stop) => stop());
  });

  test('a batch subscriber joining while a batch gathers gets each line once', async () => {
    // the lines of the batch gathering were in its history too, and came again in that batch
    const serverId = randomUUID();
    const first: ConsoleEvent[] = [];
    const late: ConsoleEvent[] = [];
    const stops = [await hub.subscribeBatches(serverId, (e) => first.push(e))];
    await relay(serverId, line(1));
    await until(() => seqs(first).length >= 1 || null, 5_000, 'the first batch');
    for (const seq of [2, 3, 4]) await relay(serverId, line(seq)); // the next batch gathers them
    stops.push(await hub.subscribeBatches(serverId, (e) => late.push(e)));
    await relay(serverId, line(5));
    await until(() => (seqs(first).length >= 5 && seqs(late).length >= 5) || null, 5_000, 'the batches');
    await new Promise((r) => setTimeout(r, 150));
    expect({ first: seqs(first), late: seqs(late) }).toEqual({ first: [1, 2, 3, 4, 5], late: [1, 2, 3, 4, 5] });
    stops.forEach((stop) => stop());
  });
});

/** A hub on an in-process bus with no node to reach, and a server id; `close` ends both. */
function floodedHub() {
  const bus = new LocalBus();
  const hub = new ConsoleHub(bus, () => Promise.reject(new Error('no node in this test')));
  const close = async () => {
    await hub.close();
    await bus.close();
  };
  return { bus, hub, serverId: randomUUID(), close };
}

describe('the console hub under a flood its subscribers cannot take', () => {
  test('the event loop turns between slices of the hand-out; late lines are dropped, a gap in seq to every subscriber and not in skipped, none repeated, in order', async () => {
    const { bus, hub, serverId, close } = floodedHub();
    const N = 2000;
    // twenty per-line subscribers at 0.1 ms a line each: 2 ms a line (4 s for the flood, far past FANOUT_MAX_WAIT_MS)
    const perLine: number[] = [];
    const unsubscribes = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        hub.subscribe(serverId, (e) => {
          if (e.type !== 'console_output') return;
          const end = performance.now() + 0.1;
          while (performance.now() < end);
          if (i === 0) perLine.push(e.data.seq as number);
        }),
      ),
    );
    let batchLines = 0;
    let batchSkipped = 0;
    let batchGaps = 0;
    let lastSeq = 0;
    let sawStatus = false;
    const unbatch = await hub.subscribeBatches(serverId, (e) => {
      if (e.type === 'status') sawStatus = true; // it comes after every line, once the batcher has sent them
      if (e.type !== 'console_batch') return;
      batchLines += e.data.lines.length;
      batchSkipped += e.data.skipped;
      for (const l of e.data.lines as { seq: number }[]) {
        batchGaps += l.seq - lastSeq - 1;
        lastSeq = l.seq;
      }
    });
    const gapsAtTheEnd = () => N - lastSeq; // the last lines may be dropped too
    let timerSawLines = -1;
    setTimeout(() => (timerSawLines = perLine.length), 0);
    for (let seq = 1; seq <= N; seq++) void bus.publish(serverId, line(seq));
    await bus.publish(serverId, { type: 'status', data: { status: 'running' } });
    const deadline = Date.now() + 20_000;
    while (!sawStatus && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(sawStatus).toBe(true);
    expect(timerSawLines).toBeGreaterThanOrEqual(0);
    expect(timerSawLines).toBeLessThan(N / 4);
    // each line the batch reader did not get is counted once: by the gaps (the node dropped none here)
    expect(batchGaps + gapsAtTheEnd()).toBeGreaterThan(0);
    expect(batchLines + batchGaps + gapsAtTheEnd() + batchSkipped).toBe(N);
    expect(batchSkipped).toBe(0);
    expect(perLine.length).toBe(batchLines);
    expect(perLine.every((q, i) => i === 0 || q > perLine[i - 1]!)).toBe(true);
    unsubscribes.forEach((u) => u());
    unbatch();
    await close();
  }, 30_000);
});

describe('the console hub with one costly subscriber (the machine busy elsewhere)', () => {
  test('its hand-out falls behind but drops nothing: every line comes, in order', async () => {
    const { bus, hub, serverId, close } = floodedHub();
    const N = 1000;
    const got: number[] = [];
    const unsubscribe = await hub.subscribe(serverId, (e) => {
      if (e.type !== 'console_output') return;
      const end = performance.now() + 2;
      while (performance.now() < end);
      got.push(e.data.seq as number);
    });
    let skipped = 0;
    const unbatch = await hub.subscribeBatches(serverId, (e) => e.type === 'console_batch' && (skipped += e.data.skipped));
    for (let seq = 1; seq <= N; seq++) void bus.publish(serverId, line(seq));
    await until(() => got.length >= N || null, 15_000, 'every line');
    expect(got).toEqual(Array.from({ length: N }, (_, i) => i + 1));
    expect(skipped).toBe(0);
    unsubscribe();
    unbatch();
    await close();
  }, 30_000);
});

describe('the GraphQL subscriber queue', () => {
  /** An iterator fed by hand: `push` plays the hub delivering events. */
  function fedIterator() {
    let push: (e: ConsoleEvent) => void = () => undefined;
    const it = eventIterator(
      async (listener) => {
        push = listener;
        return () => undefined;
      },
      (e) => e.data.seq as number,
    );
    return { it, push: (e: ConsoleEvent) => push(e) };
  }

  test('a burst of one full Redis message is queued whole, and read in order', async () => {
    const { it, push } = fedIterator();
    const first = it.next();
    for (let seq = 1; seq <= MAX_BATCH_EVENTS + 1; seq++) push(line(seq)); // one delivered to the waiting next(), the rest queued
    expect((await first).value).toBe(1);
    let expected = 2;
    for (; expected <= MAX_BATCH_EVENTS + 1; expected++) {
      const r = await it.next();
      if (r.value !== expected) break;
    }
    expect(expected).toBe(MAX_BATCH_EVENTS + 2);
    await it.return!();
  });

  test('a subscriber that stops reading is ended with SUBSCRIBER_TOO_SLOW (not an internal error)', async () => {
    const { it, push } = fedIterator();
    const first = it.next();
    for (let seq = 1; seq <= 3 * MAX_BATCH_EVENTS; seq++) push(line(seq));
    expect((await first).value).toBe(1);
    const error = await (async () => {
      for (;;) await it.next();
    })().catch((err: { extensions?: { code?: string } }) => err);
    expect(error.extensions?.code).toBe(SUBSCRIBER_TOO_SLOW);
  });
});
