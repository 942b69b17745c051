/**
 * Install scripts on a real agent: the interpreter the spec names (an egg's entrypoint; ash runs with
 * bash where the node lacks ash), the time limit, and the agent's refusal of an unknown interpreter.
 */
import { findExecutable } from '../../src/shared/executables';
import { demoSpec, logs, newId, startHarness, waitStatus, type Harness } from './helpers';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ installTimeoutMs: 1500 });
});
afterAll(async () => {
  expect(await h?.close()).toEqual([]);
});

const put = (spec: { id: string; [field: string]: unknown }) => h.request('PUT', `/api/servers/${spec.id}`, spec);

test('an ash script runs with ash, or with bash where the node has no ash', async () => {
  const id = newId();
  // `[[ ]]`: bash and busybox ash have it, dash (/bin/sh here) does not
  const r = await put({ ...demoSpec(id), install: '[[ -n "$P_SERVER_UUID" ]] && echo "uuid $P_SERVER_UUID on $SERVER_IP"', installShell: 'ash' });
  expect(r.status).toBe(200);
  await waitStatus(h, id, 'offline', 20_000);
  expect(await logs(h, id)).toContain(`uuid ${id} on 0.0.0.0`);
  if (!findExecutable('ash', process.env.PATH ?? '')) expect((await logs(h, id)).some((l) => l.includes('not installed on this node'))).toBe(false);
});

test('a script over the time limit is killed and the install fails', async () => {
  const id = newId();
  const started = Date.now();
  expect((await put({ ...demoSpec(id), install: 'echo begin; sleep 30; echo never', installShell: 'bash' })).status).toBe(200);
  await waitStatus(h, id, 'install_failed', 20_000);
  expect(Date.now() - started).toBeLessThan(15_000);
  const lines = await logs(h, id);
  expect(lines.some((l) => l.includes('did not finish within 2 s; killing it'))).toBe(true);
  expect(lines).not.toContain('never');
});

test('an interpreter the agent does not know is refused', async () => {
  const id = newId();
  const r = await put({ ...demoSpec(id), install: 'echo hi', installShell: 'python3' });
  expect(r.status).toBe(422);
  expect(r.body.error.details.fields.installShell).toBeDefined();
});
