/** A start that cannot complete says why, in words an operator can act on, and leaves nothing open. */
import { createHook } from 'node:async_hooks';
import net from 'node:net';
import { startTestPlatform } from '../support/harness.js';
import { sleep } from '../support/wait.js';

function occupy(): Promise<net.Server & { port: number }> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '0.0.0.0', () => resolve(Object.assign(s, { port: (s.address() as net.AddressInfo).port })));
  });
}

test('AGENT_PORT already in use: a clear error naming the setting', async () => {
  const busy = await occupy();
  try {
    await expect(startTestPlatform({ localAgent: true, agentPort: busy.port })).rejects.toThrow(/AGENT_PORT \d+ is already in use.*LOCAL_AGENT=false/);
  } finally {
    busy.close();
  }
});

test('SFTP_PORT already in use: a clear error naming the setting', async () => {
  const busy = await occupy();
  try {
    await expect(startTestPlatform({ localAgent: true, agentPort: 0, sftpPort: busy.port })).rejects.toThrow(/SFTP_PORT \d+ is already in use: set SFTP_PORT to a free port/);
  } finally {
    busy.close();
  }
});

test('PORT already in use: a clear error naming the setting', async () => {
  const busy = await occupy();
  try {
    await expect(startTestPlatform({ port: busy.port, host: '0.0.0.0' })).rejects.toThrow(/PORT \d+ is already in use/);
  } finally {
    busy.close();
  }
});

/** The TCP sockets and servers this process holds (from Node's own list of what keeps it alive). */
function openResources(): string[] {
  return process.getActiveResourcesInfo().filter((r) => r.startsWith('TCP')).sort();
}

async function settled(): Promise<string[]> {
  await sleep(300);
  return openResources();
}

test('a start that fails after the GraphQL gateway and console hub exist leaves nothing open', async () => {
  const before = await settled();
  const busy = await occupy();
  try {
    await expect(startTestPlatform({ port: busy.port, host: '0.0.0.0' })).rejects.toThrow(/PORT \d+ is already in use/);
  } finally {
    await new Promise((r) => busy.close(r));
  }
  expect(await settled()).toEqual(before);
});

test('a start that fails at its last step (the local agent, after the HTTP server listens) closes everything it opened', async () => {
  const before = await settled();
  const busy = await occupy();
  try {
    await expect(startTestPlatform({ localAgent: true, agentPort: busy.port })).rejects.toThrow(/AGENT_PORT \d+ is already in use/);
  } finally {
    await new Promise((r) => busy.close(r));
  }
  expect(await settled()).toEqual(before);
});

test('a platform that started and closed leaves nothing open (with Redis: its console bus connections too)', async () => {
  const before = await settled();
  const p = await startTestPlatform();
  await p.stop();
  expect(await settled()).toEqual(before);
});

/**
 * Records the timers created until stop() that are still pending and keep the process alive (ref'd),
 * with where they were made; unref'd ones (such as AbortSignal.timeout's) do not count. Jest's own
 * reporter timers are left out.
 */
function trackTimers(): { stop(): void; alive(): string[]; dispose(): void } {
  const pending = new Map<number, { timer: { hasRef(): boolean }; where: string }>();
  let recording = true;
  const hook = createHook({
    init(id, type, _trigger, resource) {
      if (!recording || type !== 'Timeout') return;
      const where = new Error().stack!.split('\n').slice(6, 20).join(' | ');
      if (!where.includes('/node_modules/@jest/')) pending.set(id, { timer: resource as { hasRef(): boolean }, where });
    },
    destroy(id) {
      pending.delete(id);
    },
  }).enable();
  return {
    stop: () => (recording = false),
    alive: () => [...pending.values()].filter((p) => p.timer.hasRef()).map((p) => p.where),
    dispose: () => hook.disable(),
  };
}

test('a start that fails after the local agent said hello leaves no work running that keeps the process alive', async () => {
  // The agent's first heartbeat reaches the panel before the agent's own listen fails. Its answer must be
  // done before the database closes: work that asks the closing pool for a connection leaves the pool's
  // 60 s acquire timer keeping the process (and Jest) alive.
  const timers = trackTimers();
  const busy = await occupy();
  try {
    await expect(startTestPlatform({ localAgent: true, agentPort: busy.port })).rejects.toThrow(/AGENT_PORT/);
    timers.stop();
    await sleep(1000);
    expect(timers.alive()).toEqual([]);
  } finally {
    timers.dispose();
    await new Promise((r) => busy.close(r));
  }
});
