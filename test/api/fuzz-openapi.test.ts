/**
 * A campaign of generated bad requests over every REST operation of the OpenAPI document (built from
 * the code, so new operations join by themselves): wrong types for each field of a body, missing and
 * extra fields, huge strings, odd Unicode (lone surrogates, bidi controls, NUL, astral characters),
 * numbers out of range, malformed JSON, wrong Content-Type, ids that are no UUID or nobody's, bad
 * query values; as anonymous, a user and an admin. Every answer must come within 5 s, with a status
 * the document gives the operation (or 400, for a request that cannot be read at all; never a 500),
 * and in the error shape when it is an error.
 */
import fc from 'fast-check';
import { buildOpenApiDocument } from '../../src/openapi/document.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20261125);
const RUNS = 1200;

interface Op {
  method: string;
  template: string;
  statuses: Set<number>;
  params: string[];
  query: { name: string; schema: any }[];
  body: any | null;
  raw: boolean;
}

const doc = buildOpenApiDocument();
const resolve = (schema: any): any => (schema?.$ref ? doc.components!.schemas![schema.$ref.split('/').pop()] : schema);
const OPS: Op[] = Object.entries(doc.paths).flatMap(([template, item]) =>
  Object.entries(item as Record<string, any>).map(([method, op]) => ({
    method: method.toUpperCase(),
    template,
    statuses: new Set(Object.keys(op.responses).map(Number)),
    params: (op.parameters ?? []).filter((p: any) => p.in === 'path').map((p: any) => p.name),
    query: (op.parameters ?? []).filter((p: any) => p.in === 'query').map((p: any) => ({ name: p.name, schema: p.schema })),
    body: op.requestBody?.content?.['application/json'] ? resolve(op.requestBody.content['application/json'].schema) : null,
    raw: Boolean(op.requestBody && !op.requestBody.content?.['application/json']),
  })),
);

const odd = fc.constantFrom('\ud800', 'a\u0000b', '\u202eevil', '\u200b', '😀'.repeat(50), 'x'.repeat(100_000), '../../etc/passwd', '%00', ' ', '', '{"$ne":null}', "' or 1=1 --");
const badScalar = fc.oneof(odd, fc.string(), fc.integer(), fc.double(), fc.constantFrom(-1, 0, 2 ** 31, 2 ** 53 + 1, 1e308, -0), fc.boolean(), fc.constant(null));
const badValue = fc.oneof(badScalar, fc.array(badScalar, { maxLength: 4 }), fc.dictionary(fc.string({ maxLength: 8 }), badScalar, { maxKeys: 3 }));

/** A body for an operation: its properties, each maybe wrong, maybe missing; sometimes not an object at all. */
function bodyOf(op: Op): fc.Arbitrary<{ raw: string; type: string }> {
  const props = Object.keys(resolve(op.body)?.properties ?? {});
  const object = fc.record(Object.fromEntries(props.map((p) => [p, fc.option(badValue, { nil: undefined })])), { requiredKeys: [] });
  const json = fc.oneof(object, object.map((o) => ({ ...o, unexpected: 'field' })), fc.jsonValue());
  return fc.oneof(
    { weight: 6, arbitrary: json.map((v) => ({ raw: JSON.stringify(v) ?? 'null', type: 'application/json' })) },
    { weight: 1, arbitrary: fc.constantFrom('{"a":', '{"a":1}}', '\u0000', 'null', '[', '{"email": "\\ud800"}').map((raw) => ({ raw, type: 'application/json' })) },
    { weight: 1, arbitrary: json.map((v) => ({ raw: JSON.stringify(v) ?? '', type: 'text/plain' })) },
  );
}

const idValue = fc.oneof(fc.uuid(), fc.constantFrom('not-a-uuid', '00000000-0000-0000-0000-000000000000', '..', '%2e%2e', 'x'.repeat(300)));

const requestOf = fc.constantFrom(...OPS).chain((op) =>
  fc.record({
    op: fc.constant(op),
    ids: fc.array(idValue, { minLength: op.params.length, maxLength: op.params.length }),
    query: fc.array(fc.tuple(fc.constantFrom(...(op.query.length ? op.query.map((q) => q.name) : ['page', 'limit', 'x'])), fc.oneof(odd, fc.string(), fc.integer().map(String))), { maxLength: 3 }),
    body: op.body || op.raw || ['POST', 'PATCH', 'PUT'].includes(op.method) ? bodyOf(op).map((b) => b as { raw: string; type: string } | null) : fc.constant(null),
    who: fc.constantFrom('anonymous', 'user', 'admin'),
  }),
);

/** Percent-encodes `s`; a lone surrogate becomes the bytes of one (invalid UTF-8, as a hostile client may send). */
const enc = (s: string): string => encodeURIComponent(s.replace(/\p{Cs}/gu, '\u0001')).replace(/%01/g, '%ED%A0%80');

let p: TestPlatform;
let tokens: Record<string, string | undefined>;
beforeAll(async () => {
  p = await startTestPlatform({ rateLimits: { general: 1_000_000, auth: 1_000_000, admin: 1_000_000 } });
  tokens = { anonymous: undefined, user: (await p.newUser('fuzz')).token, admin: (await p.admin()).token };
});
afterAll(async () => {
  await p?.stop();
});

test(`${RUNS} generated bad requests over all ${OPS.length} operations: documented statuses, the error shape, no 500, no hang`, async () => {
  expect(OPS.length).toBeGreaterThan(40);
  const problems: string[] = [];
  let sent = 0;
  await fc.assert(
    fc.asyncProperty(requestOf, async ({ op, ids, query, body, who }) => {
      // signing out would end the token the campaign goes on with
      const token = op.template.endsWith('/auth/signout') ? undefined : tokens[who];
      let path = op.template;
      op.params.forEach((name, i) => (path = path.replace(`{${name}}`, enc(ids[i]!))));
      const qs = query.map(([k, v]) => `${enc(k)}=${enc(v)}`).join('&');
      const url = p.url + path + (qs ? `?${qs}` : '');
      const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
      if (body) headers['content-type'] = body.type;
      let res: Response;
      try {
        res = await fetch(url, { method: op.method, headers, body: body?.raw, signal: AbortSignal.timeout(5000) });
      } catch (err) {
        problems.push(`${op.method} ${path}: no answer within 5 s (${(err as Error).message})`);
        return;
      }
      sent++;
      const text = await res.text();
      const where = `${op.method} ${op.template} as ${who} → ${res.status}: ${text.slice(0, 200)}`;
      if (res.status >= 500) problems.push(where);
      // 400 may answer any request that cannot be read (its line or headers too large, a body that is not JSON)
      else if (!op.statuses.has(res.status) && res.status !== 400 && !(res.status === 404 && op.params.length)) problems.push(`undocumented status: ${where}`);
      else if (res.status >= 400 && op.template.startsWith('/api/v1')) {
        let b: any = null;
        try {
          b = JSON.parse(text);
        } catch {
          /* not JSON */
        }
        const shaped = b && typeof b.error?.code === 'string' && typeof b.error?.message === 'string' && b.error?.details && typeof b.error.details === 'object';
        if (!shaped) problems.push(`not the error shape: ${where}`);
      }
    }),
    { numRuns: RUNS, seed: SEED, endOnFailure: true },
  );
  expect(sent).toBeGreaterThanOrEqual(1000);
  expect(problems.slice(0, 20)).toEqual([]);
}, 300_000);
