/** graphql-ws on /graphql: connection authentication (connectionParams, cookie, header), limits and errors. */
import { createClient, type Client, type FormattedExecutionResult as ExecutionResult } from 'graphql-ws';
import WebSocket from 'ws';
import { CREDENTIAL_RECHECK_MS } from '../../src/graphql/ws.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { trackedClients } from '../support/gql-ws.js';
import { gql } from './gql.js';

let p: TestPlatform;
let wsUrl: string;
const clients = trackedClients();

beforeAll(async () => {
  p = await startTestPlatform();
  wsUrl = p.url.replace(/^http/, 'ws') + '/graphql';
});
afterAll(async () => {
  await clients.disposeAll();
  await p?.stop();
});

/** A client with no retries; `closed` resolves with the close code. */
function client(connectionParams?: Record<string, unknown>, headers?: Record<string, string>) {
  let closedWith: (code: number) => void = () => undefined;
  const closed = new Promise<number>((resolve) => (closedWith = resolve));
  class WS extends WebSocket {
    constructor(address: string, protocols?: string | string[]) {
      super(address, protocols, headers ? { headers } : undefined);
    }
  }
  const c = clients.track(
    createClient({
      url: wsUrl,
      webSocketImpl: WS,
      retryAttempts: 0,
      lazy: false,
      ...(connectionParams ? { connectionParams } : {}),
      on: { closed: (e) => closedWith((e as { code: number }).code) },
      onNonLazyError: () => undefined,
    }),
  );
  return { c, closed };
}

function run(c: Client, query: string, variables?: Record<string, unknown>): Promise<ExecutionResult<any>> {
  return new Promise((resolve, reject) => {
    let result: ExecutionResult<any> | undefined;
    c.subscribe<any, any>(
      { query, ...(variables ? { variables } : {}) },
      {
        next: (r) => (result = r),
        error: (e) => (Array.isArray(e) ? resolve({ errors: e }) : reject(e)),
        complete: () => resolve(result!),
      },
    );
  });
}

test('connectionParams.authorization "Bearer …" is accepted and the actor is used', async () => {
  const u = await p.newUser();
  const { c } = client({ authorization: `Bearer ${u.token}` });
  const r = await run(c, '{ me { id email } }');
  expect(r.data?.me).toEqual({ id: u.user.id, email: u.email });
});

test('the session cookie (or Authorization header) of the upgrade request is accepted', async () => {
  const u = await p.newUser();
  const viaCookie = client(undefined, { cookie: `hp_session=${u.token}` });
  expect((await run(viaCookie.c, '{ me { id } }')).data?.me.id).toBe(u.user.id);
  const viaHeader = client(undefined, { authorization: `Bearer ${u.token}` });
  expect((await run(viaHeader.c, '{ me { id } }')).data?.me.id).toBe(u.user.id);
});

test('missing, malformed or invalid credentials are rejected with close code 4401', async () => {
  for (const params of [undefined, { authorization: 'Bearer hps_invalid' }, { authorization: 'nonsense' }]) {
    const { c, closed } = client(params);
    const attempt = run(c, '{ me { id } }').catch((e) => e);
    expect(await closed).toBe(4401);
    await attempt;
  }
});

test('a cookie from a foreign Origin is refused with 4403 (cross-site WebSocket hijacking)', async () => {
  const u = await p.newUser();
  const { c, closed } = client(undefined, { cookie: `hp_session=${u.token}`, origin: 'https://evil.example' });
  const attempt = run(c, '{ me { id } }').catch((e) => e);
  expect(await closed).toBe(4403);
  await attempt;
});

test('errors over WebSocket use the same codes; a revoked credential stops working for new operations', async () => {
  const u = await p.newUser();
  const { c, closed } = client({ authorization: `Bearer ${u.token}` });
  const notFound = await run(c, '{ server(id: "00000000-0000-4000-8000-000000000000") { id } }');
  expect(notFound.errors?.[0]?.extensions).toEqual({ code: 'NOT_FOUND', details: {} });
  const invalid = await run(c, 'mutation { updateMe(input: { name: "" }) { id } }');
  expect(invalid.errors?.[0]?.extensions?.code).toBe('VALIDATION_ERROR');
  const forbidden = await run(c, '{ adminStats { users } }');
  expect(forbidden.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  const bad = await run(c, '{ nope }');
  expect(bad.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
  let inner = 'name';
  for (let i = 0; i < 20; i++) inner = `ofType { ${inner} }`;
  const deep = await run(c, `{ __schema { types { fields { type { ${inner} } } } } }`);
  expect(deep.errors?.[0]?.extensions?.code).toBe('QUERY_TOO_DEEP');
  // nested past the parser's stack: a syntax error as over HTTP (it was INTERNAL_ERROR)
  const nested = `subscription { ${'a { '.repeat(3000)}b${' }'.repeat(3000)} }`;
  const unreadable = await run(c, nested);
  expect([unreadable.errors?.[0]?.extensions?.code, unreadable.errors?.[0]?.message]).toEqual(['GRAPHQL_PARSE_FAILED', 'Syntax Error: the operation is nested too deeply to be read.']);
  expect((await gql(p, nested, {}, { token: u.token })).body.errors?.[0]?.extensions?.code).toBe('GRAPHQL_PARSE_FAILED');

  await p.request('POST', '/api/v1/auth/signout', { token: u.token });
  // refused at once; (rarely) the connection's own credential check closes it first, with 4401
  const after = await run(c, '{ me { id } }').catch(async () => ({ errors: [{ extensions: { code: (await closed) === 4401 ? 'UNAUTHORIZED' : 'closed' } }] }));
  expect(after.errors?.[0]?.extensions?.code).toBe('UNAUTHORIZED');
});

test('an open connection is closed with 4401 once its credential is signed out or revoked', async () => {
  const u = await p.newUser();
  const { c, closed } = client({ authorization: `Bearer ${u.token}` });
  expect((await run(c, '{ me { id } }')).data?.me?.id).toBe(u.user.id);
  const t0 = Date.now();
  expect((await p.request('POST', '/api/v1/auth/signout', { token: u.token })).status).toBe(204);
  expect(await closed).toBe(4401);
  expect(Date.now() - t0).toBeLessThan(CREDENTIAL_RECHECK_MS + 2_000);

  // an API token revoked while its connection is open
  const session = (await p.request('POST', '/api/v1/auth/signin', { body: { email: u.email, password: u.password } })).body.data.token;
  const apiToken = (await p.request('POST', '/api/v1/users/me/api-tokens', { token: session, body: { name: 'ws' } })).body.data;
  // (three connections of one token: they share one credential check, and every one is closed)
  const second = client({ authorization: `Bearer ${apiToken.token}` });
  const more = [client({ authorization: `Bearer ${apiToken.token}` }), client({ authorization: `Bearer ${apiToken.token}` })];
  for (const x of [second, ...more]) expect((await run(x.c, '{ me { id } }')).data?.me?.id).toBe(u.user.id);
  // one of them leaves first: the others are still watched
  await more[1]!.c.dispose();
  expect((await p.request('DELETE', `/api/v1/users/me/api-tokens/${apiToken.id}`, { token: session })).status).toBe(204);
  expect(await second.closed).toBe(4401);
  expect(await more[0]!.closed).toBe(4401);
}, 30_000);

test('a frame over 1 MiB closes that connection with 1009 (message too big); other connections go on', async () => {
  const u = await p.newUser();
  const ok = client({ authorization: `Bearer ${u.token}` });
  expect((await run(ok.c, '{ me { id } }')).data?.me?.id).toBe(u.user.id);

  const raw = new WebSocket(wsUrl, 'graphql-transport-ws');
  await new Promise((resolve, reject) => raw.once('open', resolve).once('error', reject));
  const closed = new Promise<number>((resolve) => raw.once('close', (code) => resolve(code)));
  raw.on('error', () => undefined);
  raw.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${u.token}`, pad: 'x'.repeat(1024 * 1024 + 10) } }));
  expect(await closed).toBe(1009);

  expect((await run(ok.c, '{ me { id } }')).data?.me?.id).toBe(u.user.id);
});
