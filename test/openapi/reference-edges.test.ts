/**
 * Edges where the served reference (openapi.json) and the server must say the same thing: sign-out
 * with an API token, a path parameter that is not percent-encoding, and the largest `page`.
 */
import { buildOpenApiDocument } from '../../src/openapi/document.js';
import { ContractChecker } from './contract.js';
import { expectError, startTestPlatform, type TestPlatform } from '../support/harness.js';

let p: TestPlatform;
let token: string;
beforeAll(async () => {
  p = await startTestPlatform({}, {}, { record: true });
  token = (await p.newUser()).token;
}, 60_000);
afterAll(async () => p?.stop(), 60_000);

test('POST /auth/signout with an API token revokes it, and the reference says so', async () => {
  const created = await p.request('POST', '/api/v1/users/me/api-tokens', { token, body: { name: 'ci' } });
  expect(created.status).toBe(201);
  const apiToken: string = created.body.data.token;
  expect((await p.request('POST', '/api/v1/auth/signout', { token: apiToken })).status).toBe(204);
  expectError(await p.request('GET', '/api/v1/users/me', { token: apiToken }), 401, 'UNAUTHORIZED');
  const doc = await p.request('GET', '/api/v1/openapi.json');
  const description: string = doc.body.paths['/api/v1/auth/signout'].post.description;
  expect(description).not.toMatch(/nothing is ended/i);
  expect(description).toMatch(/API token is revoked/);
});

test('a GET of one resource by a path id that is not percent-encoding answers a 400 the reference lists', async () => {
  const checker = new ContractChecker(buildOpenApiDocument());
  const from = p.recorded.length;
  const admin = await p.admin();
  const paths = ['/api/v1/servers/%ZZ', '/api/v1/servers/%ZZ/console-token', '/api/v1/blueprints/%ZZ'];
  for (const path of paths) expectError(await p.request('GET', path, { token }), 400, 'BAD_REQUEST');
  for (const path of ['/api/v1/nodes/%ZZ', '/api/v1/nodes/%ZZ/stats']) expectError(await p.request('GET', path, { token: admin.token }), 400, 'BAD_REQUEST');
  expect(p.recorded.slice(from).flatMap((x) => checker.check(x))).toEqual([]);
});

test.each([['/api/v1/servers'], ['/api/v1/blueprints'], ['/api/v1/users/me/api-tokens']])(
  '%s: page 2^53 − 1 is a page past the end; a larger one is the 422 the reference gives as its maximum',
  async (path) => {
    const last = await p.request('GET', `${path}?page=9007199254740991`, { token });
    expect({ status: last.status, data: last.body.data, page: last.body.meta?.page }).toEqual({ status: 200, data: [], page: 9007199254740991 });
    const over = await p.request('GET', `${path}?page=99999999999999999999`, { token });
    expectError(over, 422, 'VALIDATION_ERROR');
    expect(over.body.error.details.fields.page).toBe('must be an integer from 1 to 9007199254740991');
    const doc = buildOpenApiDocument() as unknown as { paths: Record<string, { get: { parameters: Array<{ name: string; schema: { maximum?: number } }> } }> };
    expect(doc.paths[path]!.get.parameters.find((x) => x.name === 'page')?.schema.maximum).toBe(Number.MAX_SAFE_INTEGER);
  },
);
