/**
 * The response checker of test/openapi/responses.test.ts is not vacuous: it rejects what the document
 * does not allow. And the documented NewPlant schema agrees with the runtime plant parser.
 */
import fc from 'fast-check';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { buildOpenApiDocument } from '../../src/openapi/document.js';
import { parseNewPlant } from '../../src/validation/plants.js';
import type { RecordedExchange } from '../support/harness.js';
import { ContractChecker } from './contract.js';

const doc = buildOpenApiDocument();
const checker = new ContractChecker(doc);
const headers = { 'content-type': 'application/json; charset=utf-8', 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': '59', 'x-ratelimit-reset': '1767225600' };
const user = { id: '0b6c3a52-5d0e-4b7e-9a57-1e7f1f6f2c11', email: 'ada@example.com', name: 'Ada', role: 'user', createdAt: '2026-01-01T12:00:00.000Z', updatedAt: '2026-01-01T12:00:00.000Z' };
const x = (over: Partial<RecordedExchange>): RecordedExchange => {
  const e = { method: 'GET', path: '/api/v1/users/me', status: 200, headers, body: { data: user }, text: '', ...over };
  return { ...e, text: over.text ?? (e.body === undefined ? '' : JSON.stringify(e.body)) };
};

test('a valid exchange passes', () => {
  expect(checker.check(x({}))).toEqual([]);
  expect(checker.check(x({ method: 'DELETE', path: `/api/v1/users/me/api-tokens/${user.id}`, status: 204, body: undefined, headers }))).toEqual([]);
});

test.each([
  ['an undocumented status', x({ status: 409 }), /status 409 is not documented/],
  ['an unknown path', x({ path: '/api/v1/nope' }), /no operation/],
  ['a missing field', x({ body: { data: { ...user, email: undefined } } }), /must have required property 'email'/],
  ['an undocumented field', x({ body: { data: { ...user, passwordHash: 'x' } } }), /unevaluated properties/],
  ['a wrong format', x({ body: { data: { ...user, createdAt: 'yesterday' } } }), /must match format "date-time"/],
  ['a wrong enum value', x({ body: { data: { ...user, role: 'root' } } }), /allowed values/],
  ['a missing rate-limit header', x({ headers: { ...headers, 'x-ratelimit-reset': undefined as unknown as string } }), /X-RateLimit-Reset missing/],
  ['a 429 without Retry-After', x({ status: 429, body: { error: { code: 'RATE_LIMITED', message: 'slow down', details: {} } } }), /Retry-After missing/],
  ['an unknown error code', x({ status: 401, body: { error: { code: 'GONE', message: 'x', details: {} } } }), /allowed values/],
  ['details that is not an object', x({ status: 401, body: { error: { code: 'UNAUTHORIZED', message: 'x', details: [] } } }), /must be object/],
  ['a body on a 204', x({ method: 'POST', path: '/api/v1/auth/signout', status: 204, body: { data: null } }), /without a body/],
  ['a plant error in the platform shape', x({ method: 'POST', path: '/plants', status: 400, body: { error: { code: 'BAD_REQUEST', message: 'x', details: {} } } }), /must be integer/],
])('%s fails', (_name, exchange, message) => {
  expect(checker.check(exchange).join('\n')).toMatch(message);
});

describe('NewPlant (document) and parseNewPlant (runtime) accept the same bodies', () => {
  const ajv = new Ajv2020({ strict: false });
  addFormats(ajv);
  const schema = JSON.parse(JSON.stringify(doc.components.schemas.NewPlant));
  const validate = ajv.compile(schema);
  const runtimeAccepts = (text: string) => {
    try {
      parseNewPlant(text);
      return true;
    } catch {
      return false;
    }
  };

  test.each([
    ['{"id": 1, "name": "Fern"}', true],
    ['{"id": -9223372036854775808, "name": "Fern", "tag": "x"}', true],
    ['{"id": 9223372036854775807, "name": "Fern"}', true],
    ['{"id": 1, "name": " "}', false],
    ['{"id": 1, "name": ""}', false],
    ['{"id": 1.5, "name": "Fern"}', false],
    ['{"id": "1", "name": "Fern"}', false],
    ['{"name": "Fern"}', false],
    ['{"id": 1}', false],
    ['{"id": 1, "name": "Fern", "tag": null}', false],
    ['{"id": 1, "name": "Fern", "tag": 3}', false],
    ['{"id": 1, "name": "Fern", "other": [1, 2]}', true],
  ])('%s → %p', (text, ok) => {
    expect(runtimeAccepts(text)).toBe(ok);
    expect(validate(JSON.parse(text))).toBe(ok);
  });

  test('property: any JSON object with these members', () => {
    const member = fc.oneof(fc.integer(), fc.double({ min: -(2 ** 53), max: 2 ** 53, noNaN: true }) /* beyond 2^53 a JSON Schema validator sees rounded doubles; the exact int64 range is checked by the examples above */, fc.string(), fc.constant(null), fc.boolean(), fc.constant(' '));
    fc.assert(
      fc.property(fc.record({ id: member, name: member, tag: member }, { requiredKeys: [] }), (body) => {
        const text = JSON.stringify(body);
        expect([text, validate(JSON.parse(text))]).toEqual([text, runtimeAccepts(text)]);
      }),
      { numRuns: 500 },
    );
  });
});
