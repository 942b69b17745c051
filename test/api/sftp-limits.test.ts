/**
 * SFTP logins spend the client address's sign-in budget (the `auth` bucket that POST /auth/signin
 * spends too): once it is used up, even the right password is refused until the window passes.
 */
import { blueprintsByKey, localNodeId, waitForStatus } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { connectSftp } from '../support/sftp-client.js';
import { until } from '../support/wait.js';

let p: TestPlatform;
afterAll(async () => {
  await p?.stop();
}, 60_000);

test('failed SFTP logins use up the address\u2019s sign-in budget, shared with the API', async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0, rateLimits: { general: 100_000, auth: 4, admin: 100_000 } });
  const admin = await p.admin(); // one sign-in of the budget
  const owner = await p.newUser('owner'); // sign-up: a second
  const bps = await blueprintsByKey(p, owner.token);
  const nodeId = await localNodeId(p, admin.token);
  const r = await p.request('POST', '/api/v1/servers', { token: owner.token, body: { name: 'limits', nodeId, blueprintId: bps['shell-command'].id, memory: 128, cpu: 50, disk: 128, variables: { COMMAND: 'sleep 600' } } });
  await waitForStatus(p, owner.token, r.body.data.id, 'offline');
  const details = await until(async () => {
    const d = (await p.request('GET', `/api/v1/servers/${r.body.data.id}/sftp`, { token: owner.token })).body.data;
    return d?.port ? d : null;
  }, 20_000, 'the SFTP details');
  const login = (password: string) => connectSftp({ port: details.port, username: details.username, password });
  // a wrong password spends one; the right one works while budget is left, and spends one too
  await expect(login('wrong-password')).rejects.toThrow(/authentication/i);
  const ok = await login(owner.password);
  ok.end();
  // used up: the right password is refused, and so is the API's sign-in from the same address
  await expect(login(owner.password)).rejects.toThrow(/authentication|closed/i);
  const signin = await p.request('POST', '/api/v1/auth/signin', { body: { email: owner.email, password: owner.password } });
  expect(signin.status).toBe(429);
}, 90_000);
