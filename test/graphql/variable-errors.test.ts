/**
 * Bad variables answer the same over HTTP and WebSocket: VALIDATION_ERROR with the field path as data
 * (never read back out of graphql-js's message text), `is required` for a missing field, and
 * BAD_USER_INPUT for an input field the type does not define. Errors refused before GraphQL runs
 * (CSRF) have the same shape as those GraphQL produces.
 */
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { gql } from './gql.js';

let p: TestPlatform;
let token: string;
let ws: Client;

beforeAll(async () => {
  p = await startTestPlatform();
  token = (await p.newUser()).token;
  ws = createClient({ url: p.url.replace(/^http/, 'ws') + '/graphql', webSocketImpl: WebSocket, retryAttempts: 0, connectionParams: { authorization: `Bearer ${token}` } });
});
afterAll(async () => {
  await ws?.dispose();
  await p?.stop();
});

function overWs(query: string, variables: Record<string, unknown>): Promise<any[]> {
  return new Promise((resolve, reject) => {
    ws.subscribe<any>({ query, variables }, {
      next: (r) => resolve([...(r.errors ?? [])]),
      error: (e) => (Array.isArray(e) ? resolve(e) : reject(e)),
      complete: () => undefined,
    });
  });
}

/** The first error's extensions over HTTP (with its status) and over WebSocket. */
async function both(query: string, variables: Record<string, unknown>) {
  const http = await gql(p, query, variables, { token });
  return { status: http.status, http: http.body.errors?.[0]?.extensions, ws: (await overWs(query, variables))[0]?.extensions };
}

const SIGN_UP = 'mutation($input: SignUpInput!) { signUp(input: $input) { token } }';
const CREATE = 'mutation($i: CreateServerInput!) { createServer(input: $i) { id } }';
const ids = { nodeId: '00000000-0000-4000-8000-000000000001', blueprintId: '00000000-0000-4000-8000-000000000002' };

test('a wrong type names its field, even when the bad value itself contains "; " or quotes', async () => {
  const r = await both(SIGN_UP, { input: { email: 'x@example.com', name: 'X', password: ['a; b at "input.name"; c'] } });
  expect(r.status).toBe(400);
  expect(r.http).toEqual({ code: 'VALIDATION_ERROR', details: { fields: { password: expect.stringMatching(/String cannot represent/) } } });
  expect(r.ws).toEqual(r.http);
});

test('a missing field of an input object is "is required" under its own name; a missing variable under the variable', async () => {
  const r = await both(CREATE, { i: { ...ids, memory: 256 } });
  expect(r.http).toEqual({ code: 'VALIDATION_ERROR', details: { fields: { name: 'is required' } } });
  expect(r.ws).toEqual(r.http);
  const missing = await both(CREATE, {});
  expect(missing.http).toEqual({ code: 'VALIDATION_ERROR', details: { fields: { i: 'is required' } } });
  expect(missing.ws).toEqual(missing.http);
});

test('several bad fields are all reported', async () => {
  const r = await both(CREATE, { i: { ...ids, name: 'x', memory: 'lots', disk: 1.5 } });
  expect(r.http).toEqual({ code: 'VALIDATION_ERROR', details: { fields: { memory: expect.any(String), disk: expect.any(String) } } });
  expect(r.ws).toEqual(r.http);
});

test('an input field the type does not define is BAD_USER_INPUT', async () => {
  const r = await both(CREATE, { i: { ...ids, name: 'x', colour: 'red' } });
  expect(r.http).toEqual({ code: 'BAD_USER_INPUT', details: {} });
  expect(r.ws).toEqual(r.http);
});

test('a request refused before GraphQL runs (cross-site cookie write) has the shape of GraphQL\'s own errors', async () => {
  const r = await p.request('POST', '/graphql', {
    cookie: `hp_session=${token}`,
    headers: { origin: 'https://evil.example' },
    body: { query: 'mutation { updateMe(input: { name: "x" }) { id } }' },
  });
  expect(r.status).toBe(403);
  expect(r.body).toEqual({ errors: [{ message: expect.any(String), extensions: { code: 'FORBIDDEN', details: {} } }] });
});
