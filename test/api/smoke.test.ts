import { startTestPlatform, type TestPlatform } from '../support/harness.js';

let p: TestPlatform;
beforeAll(async () => {
  p = await startTestPlatform();
});
afterAll(async () => p?.stop());

test('health and signup', async () => {
  const h = await p.request('GET', '/health');
  expect(h.status).toBe(200);
  expect(h.body).toEqual({ status: 'ok', database: 'up' });
  const u = await p.newUser();
  const me = await p.request('GET', '/api/v1/users/me', { token: u.token });
  expect(me.status).toBe(200);
  expect(me.body.data.email).toBe(u.email);
});
