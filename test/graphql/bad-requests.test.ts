/**
 * GraphQL requests that used to get INTERNAL_ERROR, or a cheaper rate-limit bucket than their
 * operation's (found by an audit of the gateway): each gets a request error with its own code.
 */
import { createHash } from 'node:crypto';
import { getIntrospectionQuery } from 'graphql';
import type { Client, FormattedExecutionResult } from 'graphql-ws';
import { trackedClients } from '../support/gql-ws.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { expectData, expectGqlError, gql } from './gql.js';

let p: TestPlatform;
let token: string;
const clients = trackedClients();

beforeAll(async () => {
  p = await startTestPlatform({ rateLimits: { general: 1000, auth: 4, admin: 1000 } });
  token = (await p.newUser()).token; // 1 of the 4 auth requests of this address
});
afterAll(async () => {
  await clients.disposeAll();
  await p?.stop();
});

describe('over HTTP', () => {
  test('an unknown operationName, or several operations and none named, is a 400 BAD_REQUEST', async () => {
    expectGqlError(await gql(p, 'query A { me { id } }', undefined, { token, operationName: 'B' }), 'BAD_REQUEST', 400);
    expectGqlError(await gql(p, 'query A { me { id } } query B { me { email } }', undefined, { token }), 'BAD_REQUEST', 400);
    // signed out too (the operation is resolved before anything runs)
    expectGqlError(await gql(p, 'mutation A { signOut }', undefined, { operationName: 'Z' }), 'BAD_REQUEST', 400);
    // and the right name still runs
    expect(expectData(await gql(p, 'query A { me { id } } query B { me { email } }', undefined, { token, operationName: 'B' })).me.email).toMatch(/@/);
  });

  test('a subscription over HTTP is a 400 that points to the WebSocket', async () => {
    const r = await gql(p, 'subscription { consoleOutput(serverId: "00000000-0000-4000-8000-000000000000") { line } }', undefined, { token });
    expectGqlError(r, 'BAD_REQUEST', 400);
    expect(r.body.errors![0]!.message).toMatch(/WebSocket/);
  });

  test('a body that does not match its Content-Encoding is a 400', async () => {
    const r = await p.request('POST', '/graphql', { token, raw: 'xxxx', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } });
    expect(r.status).toBe(400);
    expect(r.body.errors[0].extensions.code).toBe('BAD_REQUEST');
  });

  test('a persisted-query hash alone runs nothing: signIn cannot dodge the auth bucket that way', async () => {
    const query = 'mutation S($e: String!, $p: String!) { signIn(input: { email: $e, password: $p }) { token } }';
    const sha256Hash = createHash('sha256').update(query).digest('hex');
    const extensions = { persistedQuery: { version: 1, sha256Hash } };
    const variables = { e: 'nobody@example.com', p: 'wrong password' };
    // registering the hash with the full text is an ordinary signIn (auth bucket)
    await p.request('POST', '/graphql', { body: { query, variables, extensions } });
    for (let i = 0; i < 5; i++) {
      const r = await p.request('POST', '/graphql', { body: { variables, extensions } });
      // Apollo's own answer for a server without persisted queries (clients then send the text)
      expect(r.body.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_NOT_SUPPORTED');
      expect(r.body.data ?? null).toBeNull();
      expect(JSON.stringify(r.body)).not.toMatch(/Invalid email or password/);
    }
  });

  test('aliasing the schema dump many times is refused with QUERY_TOO_COMPLEX; one standard introspection query is fine', async () => {
    const aliases = Array.from({ length: 20 }, (_, i) => `s${i}: __schema { types { name fields { name } } }`).join(' ');
    expectGqlError(await gql(p, `{ ${aliases} }`), 'QUERY_TOO_COMPLEX', 400);
    expect(expectData(await gql(p, getIntrospectionQuery())).__schema.types.length).toBeGreaterThan(10);
  });
});

describe('over graphql-ws', () => {
  const client = (): Client => clients.open(p.url, token);
  function run(c: Client, payload: { query: string; variables?: Record<string, unknown>; operationName?: string }): Promise<FormattedExecutionResult<any, any>> {
    return new Promise((resolve, reject) => {
      let result: FormattedExecutionResult<any, any> | undefined;
      c.subscribe<any, any>(payload, {
        next: (r) => (result = r),
        error: (e) => (Array.isArray(e) ? resolve({ errors: e }) : reject(e)),
        complete: () => resolve(result!),
      });
    });
  }

  test('an unknown operationName is BAD_REQUEST, as over HTTP', async () => {
    const c = client();
    const r = await run(c, { query: 'query A { me { id } }', operationName: 'B' });
    expect(r.errors?.[0]?.extensions?.code).toBe('BAD_REQUEST');
    const two = await run(c, { query: 'query A { me { id } } query B { me { id } }' });
    expect(two.errors?.[0]?.extensions?.code).toBe('BAD_REQUEST');
  });

  test('variables of the wrong type, or missing, are VALIDATION_ERROR with the field, as over HTTP', async () => {
    const c = client();
    const wrong = await run(c, { query: 'query($id: ID!) { server(id: $id) { id } }', variables: { id: { a: 1 } } });
    expect(wrong.errors?.[0]?.extensions).toEqual({ code: 'VALIDATION_ERROR', details: { fields: { id: expect.any(String) } } });
    const missing = await run(c, { query: 'subscription($s: ID!) { serverStatus(serverId: $s) { status } }', variables: {} });
    expect(missing.errors?.[0]?.extensions).toEqual({ code: 'VALIDATION_ERROR', details: { fields: { s: 'is required' } } });
    // the HTTP answer for the first one, for comparison
    const http = await gql(p, 'query($id: ID!) { server(id: $id) { id } }', { id: { a: 1 } }, { token });
    expect(http.body.errors?.[0]?.extensions.code).toBe('VALIDATION_ERROR');
  });
});
