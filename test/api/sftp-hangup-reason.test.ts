/**
 * When the node ends an SFTP session (the user's access to the server was removed, their password
 * changed), OpenSSH's `sftp` prints why: ssh2 sends its disconnect message without a description, so
 * the agent writes a line to the session channel's stderr first, which OpenSSH's client prints.
 * Without it the user sees "Received disconnect … 11:" with nothing after it, and their next login
 * fails like a wrong password.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createLocalDemoServer } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { sleep, until } from '../support/wait.js';

const haveTools = spawnSync('sh', ['-c', 'command -v sshpass && command -v sftp']).status === 0;
const maybe = haveTools ? describe : describe.skip;

maybe("OpenSSH's sftp is told why the node ended its session", () => {
  let p: TestPlatform;
  let owner: { token: string };
  let serverId: string;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    p = await startTestPlatform({ localAgent: true, agentPort: 0 });
    const admin = await p.admin();
    owner = await p.newUser('Owner');
    serverId = await createLocalDemoServer(p, admin.token, owner.token, 'Told');
  }, 120_000);
  afterAll(async () => {
    for (const c of children) c.kill();
    await p?.stop();
  }, 60_000);

  /** An interactive OpenSSH sftp session of the user; its stdout and stderr together. */
  async function openSession(user: { token: string; password: string }): Promise<{ output: () => string }> {
    const { port, username } = (await p.request('GET', `/api/v1/servers/${serverId}/sftp`, { token: user.token })).body.data;
    const child = spawn('sshpass', ['-p', user.password, 'sftp', '-oStrictHostKeyChecking=no', '-oUserKnownHostsFile=/dev/null', '-P', String(port), `${username}@127.0.0.1`], { stdio: ['pipe', 'pipe', 'pipe'] });
    children.push(child);
    let output = '';
    child.stdout!.on('data', (d) => (output += d));
    child.stderr!.on('data', (d) => (output += d));
    child.stdin!.write('ls\n');
    await until(() => output.includes('Connected to'), 20_000, 'the sftp session');
    await sleep(300);
    return { output: () => output };
  }

  test('a removed subuser reads that their access was removed', async () => {
    const friend = await p.newUser('Friend');
    expect((await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: friend.email, permissions: ['file.read', 'file.sftp'] } })).status).toBe(201);
    const session = await openSession(friend);
    expect((await p.request('DELETE', `/api/v1/servers/${serverId}/subusers/${friend.user.id}`, { token: owner.token })).status).toBe(204);
    await until(() => session.output().includes('Received disconnect'), 5_000, 'the disconnect');
    await sleep(200);
    expect(session.output()).toContain('hostpanel: your access to this server was removed or changed; connect again only if you still have it');
  }, 60_000);

  test('a user whose password changed reads so', async () => {
    const user = await p.newUser('Changer');
    expect((await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: user.email, permissions: ['file.read', 'file.sftp'] } })).status).toBe(201);
    const session = await openSession(user);
    expect((await p.request('PATCH', '/api/v1/users/me', { token: user.token, body: { password: 'a-new-password-123', currentPassword: user.password } })).status).toBe(200);
    await until(() => session.output().includes('Received disconnect'), 5_000, 'the disconnect');
    await sleep(200);
    expect(session.output()).toContain("hostpanel: your account's password was changed; connect again with the new password");
  }, 60_000);
});
