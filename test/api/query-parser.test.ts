/** The query string's parser (src/http/query.ts): text comes back as sent; escapes that are not UTF-8 come back as text that is not Unicode. */
import fc from 'fast-check';
import { parseQuery } from '../../src/http/query.js';
import { isWellFormed } from '../../src/validation/common.js';

test('any well-formed text, escaped as browsers do, reads back as itself; a + is a space and a lone % stands for itself', () => {
  fc.assert(fc.property(fc.string({ unit: 'grapheme' }), (s) => expect(parseQuery(`k=${encodeURIComponent(s)}`).k).toBe(s)));
  expect(parseQuery('a=1+2&b=100%&c=%ZZ&d=caf%C3%A9')).toEqual({ a: '1 2', b: '100%', c: '%ZZ', d: 'café' });
});

test('escapes that are not UTF-8 read as text that is not well-formed, so no text rule takes them (two names that differ in them are not one)', () => {
  fc.assert(
    fc.property(fc.uint8Array({ minLength: 1, maxLength: 12 }), (bytes) => {
      const escaped = [...bytes].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
      const value = parseQuery(`k=${escaped}`).k as string;
      if (Buffer.from(bytes).toString('utf8') === value) return;
      expect(isWellFormed(value)).toBe(false);
    }),
  );
  expect(isWellFormed(parseQuery('path=/caf%E9.txt').path as string)).toBe(false);
});
