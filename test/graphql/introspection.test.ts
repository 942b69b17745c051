/**
 * GRAPHQL_INTROSPECTION: unset, it follows NODE_ENV (off in production, on otherwise); set, it wins.
 * It switches introspection (HTTP and WebSocket) and the Sandbox landing page together.
 */
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { expectGqlError, gql } from './gql.js';

const INTROSPECT = '{ __schema { queryType { name } } }';

/** Runs one operation over graphql-ws; resolves with its result or its errors. */
async function overWs(p: TestPlatform, token: string, query: string): Promise<{ data?: any; errors?: any[] }> {
  const c = createClient({
    url: p.url.replace(/^http/, 'ws') + '/graphql',
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    connectionParams: { authorization: `Bearer ${token}` },
  });
  try {
    return await new Promise((resolve, reject) => {
      let result: { data?: any; errors?: any[] } = {};
      c.subscribe<any>({ query }, {
        next: (r) => (result = r as typeof result),
        error: (e) => (Array.isArray(e) ? resolve({ errors: e }) : reject(e)),
        complete: () => resolve(result),
      });
    });
  } finally {
    await c.dispose();
  }
}

async function landingPage(p: TestPlatform): Promise<string> {
  return (await p.request('GET', '/graphql', { headers: { accept: 'text/html' } })).text;
}

describe('NODE_ENV=production without GRAPHQL_INTROSPECTION', () => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await startTestPlatform({}, { NODE_ENV: 'production' });
  });
  afterAll(async () => p?.stop());

  test('introspection is refused with a clear error over HTTP and WebSocket, and there is no Sandbox page', async () => {
    const token = (await p.newUser()).token;
    const http = await gql(p, INTROSPECT, undefined, { token });
    expectGqlError(http, 'GRAPHQL_VALIDATION_FAILED', 400);
    expect(http.body.errors![0]!.message).toMatch(/introspection is turned off.*GRAPHQL_INTROSPECTION=true/);
    const ws = await overWs(p, token, INTROSPECT);
    expect(ws.errors?.[0]).toMatchObject({ extensions: { code: 'GRAPHQL_VALIDATION_FAILED' }, message: expect.stringMatching(/introspection is turned off.*GRAPHQL_INTROSPECTION=true/) });

    const page = await landingPage(p);
    expect(page).not.toMatch(/<html|apollographql|<script/i);
    // ordinary operations still work
    expect((await gql(p, '{ me { id } }', undefined, { token })).body.data?.me.id).toEqual(expect.any(String));
  });
});

describe('NODE_ENV=production with GRAPHQL_INTROSPECTION=true', () => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await startTestPlatform({}, { NODE_ENV: 'production', GRAPHQL_INTROSPECTION: 'true' });
  });
  afterAll(async () => p?.stop());

  test('introspection answers over HTTP and WebSocket, and GET /graphql serves the Sandbox page', async () => {
    const token = (await p.newUser()).token;
    expect((await gql(p, INTROSPECT, undefined, { token })).body.data?.__schema.queryType.name).toBe('Query');
    expect((await overWs(p, token, INTROSPECT)).data?.__schema.queryType.name).toBe('Query');
    expect(await landingPage(p)).toMatch(/<html/i);
  });
});

describe('GRAPHQL_INTROSPECTION=false outside production', () => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await startTestPlatform({}, { NODE_ENV: 'development', GRAPHQL_INTROSPECTION: 'false' });
  });
  afterAll(async () => p?.stop());

  test('introspection is refused and there is no Sandbox page', async () => {
    const token = (await p.newUser()).token;
    expectGqlError(await gql(p, INTROSPECT, undefined, { token }), 'GRAPHQL_VALIDATION_FAILED', 400);
    expect(await landingPage(p)).not.toMatch(/<html/i);
  });
});
