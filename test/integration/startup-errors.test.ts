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
