/** Small helpers for the REST resource tests (real HTTP, real database). */
import type { Reply, TestPlatform } from './harness.js';

export const expectError = (r: Reply, status: number, code: string) => {
  expect({ status: r.status, code: r.body?.error?.code }).toEqual({ status, code });
  expect(r.body).toEqual({ error: { code, message: expect.any(String), details: expect.any(Object) } });
};

/** Field-level 422 with details.fields[field]. */
export const expectFieldError = (r: Reply, field: string) => {
  expectError(r, 422, 'VALIDATION_ERROR');
  expect(Object.keys(r.body.error.details.fields)).toContain(field);
};

let nodeCounter = 0;

/**
 * Registers a node through the API. Its agent address is 127.0.0.1 on a closed port, so calls to it
 * fail fast with NODE_UNAVAILABLE (syncs are best effort; deletes of its servers need `force`).
 */
export async function createNode(p: TestPlatform, adminToken: string, extra: Record<string, unknown> = {}) {
  const r = await p.request('POST', '/api/v1/nodes', {
    token: adminToken,
    body: { name: `node-${++nodeCounter}-${Date.now()}`, fqdn: '127.0.0.1', port: 1, memory: 8192, disk: 65536, cpuCores: 4, ...extra },
  });
  if (r.status !== 201) throw new Error(`node create failed: ${r.status} ${r.text}`);
  return r.body.data as { id: string; token: string; [k: string]: any };
}

export async function blueprintsByKey(p: TestPlatform, token: string): Promise<Record<string, any>> {
  const r = await p.request('GET', '/api/v1/blueprints?limit=100', { token });
  if (r.status !== 200) throw new Error(`blueprints failed: ${r.status} ${r.text}`);
  return Object.fromEntries(r.body.data.map((b: any) => [b.key, b]));
}
