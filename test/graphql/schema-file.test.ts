/**
 * schema.graphql (repo root) is the committed SDL of the gateway, printed from the code (also:
 * `node dist/src/graphql/print-schema.js` after a build). This test
 * fails when it is out of date. Regenerate it with:
 *   UPDATE_SCHEMA=1 npx jest test/graphql/schema-file.test.ts
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildGraphQLSchema, printGraphQLSchema } from '../../src/graphql/schema.js';

const FILE = path.resolve(__dirname, '../../schema.graphql');

test('schema.graphql matches the schema built from the code', async () => {
  const printed = printGraphQLSchema(await buildGraphQLSchema());
  if (process.env.UPDATE_SCHEMA === '1') {
    writeFileSync(FILE, printed);
    return;
  }
  const current = existsSync(FILE) ? readFileSync(FILE, 'utf8') : '';
  if (current !== printed) {
    const a = current.split('\n');
    const b = printed.split('\n');
    let i = 0;
    while (i < Math.max(a.length, b.length) && a[i] === b[i]) i++;
    throw new Error(
      'schema.graphql is out of date. Regenerate it with:\n  UPDATE_SCHEMA=1 npx jest test/graphql/schema-file.test.ts\nand commit the file.\n' +
        `First difference at line ${i + 1}:\n  file: ${a[i] ?? '<end of file>'}\n  code: ${b[i] ?? '<end of schema>'}`,
    );
  }
});
