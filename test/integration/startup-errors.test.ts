/** A start that cannot complete says why, in words an operator can act on, and leaves nothing open. */
import net from 'node:net';
import { startTestPlatform } from '../support/harness.js';

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
  await new Promise((r) => setTimeout(r, 300));
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

test('a platform that started and closed leaves nothing open (with Redis: its console bus connections too)', async () => {
  const before = await settled();
  const p = await startTestPlatform();
  await p.stop();
  expect(await settled()).toEqual(before);
});
