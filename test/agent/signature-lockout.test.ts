/**
 * The node agent refuses an address after 20 failed signatures in a sliding minute, before it looks
 * at the request, and says when it takes its requests again (Retry-After, as the panel's 429 does).
 */
import { signRequest } from '../../src/shared/node-protocol';
import { startHarness, type Harness } from './helpers';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

test('after 20 failed signatures the address gets 429 with Retry-After: the seconds until the oldest failure leaves the minute', async () => {
  const statuses: number[] = [];
  for (let i = 0; i < 20; i++) {
    const res = await fetch(`${h.base}/api/system`, { headers: { authorization: signRequest(h.nodeId, Buffer.alloc(32, i + 1), 'GET', '/api/system') } });
    statuses.push(res.status);
    await res.text();
  }
  expect(new Set(statuses)).toEqual(new Set([401]));
  // even a good signature is refused now
  const refused = await fetch(`${h.base}/api/system`, { headers: { authorization: signRequest(h.nodeId, h.nodeKey, 'GET', '/api/system') } });
  const body = (await refused.json()) as { error: { code: string; message: string } };
  expect([refused.status, body.error.code]).toEqual([429, 'RATE_LIMITED']);
  const wait = Number(refused.headers.get('retry-after'));
  expect(wait).toBeGreaterThanOrEqual(1);
  expect(wait).toBeLessThanOrEqual(60);
  expect(body.error.message).toContain(`try again in ${wait} s`);
});
