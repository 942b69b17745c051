/**
 * One origin rule for every cookie-authenticated entry: a REST write, a GraphQL mutation over HTTP and
 * a GraphQL WebSocket upgrade accept and refuse exactly the same Origin / Sec-Fetch-Site headers.
 * Bearer credentials are not subject to it (a page of another site cannot send them).
 */
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';

let p: TestPlatform;
let host: string;

beforeAll(async () => {
  p = await startTestPlatform({ trustedOrigins: ['https://trusted.example', 'https://slash.example/'] });
  host = new URL(p.url).host;
});
afterAll(async () => p?.stop());

type Headers = Record<string, string>;

/** [name, headers, allowed] */
const CASES: Array<[string, () => Headers, boolean]> = [
  ['same host', () => ({ origin: `http://${host}` }), true],
  ['same host over https (a TLS proxy in front)', () => ({ origin: `https://${host}` }), true],
  ['a trusted origin', () => ({ origin: 'https://trusted.example' }), true],
  ['a trusted origin that the setting writes with a trailing slash', () => ({ origin: 'https://slash.example' }), true],
  ['no Origin, no Sec-Fetch-Site (not a browser)', () => ({}), true],
  ['no Origin, Sec-Fetch-Site: same-origin', () => ({ 'sec-fetch-site': 'same-origin' }), true],
  ['a foreign origin', () => ({ origin: 'https://evil.example' }), false],
  ['a foreign port of the same name', () => ({ origin: `http://${host.split(':')[0]}:1` }), false],
  ['the opaque origin "null"', () => ({ origin: 'null' }), false],
  ['an Origin that is not a URL', () => ({ origin: 'evil' }), false],
  ['no Origin, Sec-Fetch-Site: cross-site', () => ({ 'sec-fetch-site': 'cross-site' }), false],
  ['no Origin, Sec-Fetch-Site: same-site', () => ({ 'sec-fetch-site': 'same-site' }), false],
];

async function restAllows(cookie: string, headers: Headers): Promise<boolean> {
  const r = await p.request('PATCH', '/api/v1/users/me', { cookie, headers, body: { name: 'Origin Test' } });
  if (r.status !== 200 && r.status !== 403) throw new Error(`unexpected ${r.status} ${r.text}`);
  return r.status === 200;
}

async function graphqlHttpAllows(cookie: string, headers: Headers): Promise<boolean> {
  const r = await p.request('POST', '/graphql', { cookie, headers, body: { query: 'mutation { updateMe(input: { name: "Origin Test" }) { id } }' } });
  if (r.body?.data?.updateMe?.id) return true;
  if (r.body?.errors?.[0]?.extensions?.code === 'FORBIDDEN') return false;
  throw new Error(`unexpected ${r.status} ${r.text}`);
}

/** Connects with the cookie and these upgrade headers; true when `{ me }` answers, false on 4403. */
async function wsAllows(cookie: string, headers: Headers): Promise<boolean> {
  class WS extends WebSocket {
    constructor(address: string, protocols?: string | string[]) {
      // `origin` is an option of ws (it sets the header); other headers go as they are
      const { origin, ...rest } = headers;
      super(address, protocols, { headers: { cookie, ...rest }, ...(origin ? { origin } : {}) });
    }
  }
  let closedWith = 0;
  const c = createClient({
    url: p.url.replace(/^http/, 'ws') + '/graphql',
    webSocketImpl: WS,
    retryAttempts: 0,
    on: { closed: (e) => (closedWith = (e as { code: number }).code) },
  });
  try {
    return await new Promise<boolean>((resolve, reject) => {
      c.subscribe<any>({ query: '{ me { id } }' }, {
        next: (r) => (r.data?.me?.id ? resolve(true) : reject(new Error(JSON.stringify(r)))),
        error: () => (closedWith === 4403 ? resolve(false) : reject(new Error(`closed with ${closedWith}`))),
        complete: () => undefined,
      });
    });
  } finally {
    await c.dispose();
  }
}

test.each(CASES)('%s: REST, GraphQL over HTTP and over WebSocket agree', async (_name, headers, allowed) => {
  const u = await p.newUser();
  const cookie = `hp_session=${u.token}`;
  const h = headers();
  expect({ rest: await restAllows(cookie, h), graphql: await graphqlHttpAllows(cookie, h), ws: await wsAllows(cookie, h) }).toEqual({
    rest: allowed,
    graphql: allowed,
    ws: allowed,
  });
});

test('a bearer credential is not subject to the origin rule, on any of the three', async () => {
  const u = await p.newUser();
  const headers = { origin: 'https://evil.example', authorization: `Bearer ${u.token}` };
  expect((await p.request('PATCH', '/api/v1/users/me', { headers, body: { name: 'Bearer' } })).status).toBe(200);
  expect((await p.request('POST', '/graphql', { headers, body: { query: '{ me { id } }' } })).body.data.me.id).toBe(u.user.id);
  expect(await wsAllows('', headers)).toBe(true);
});
