/**
 * schema.graphql (repo root) is the committed SDL of the gateway, printed from the code (also:
 * `node dist/src/graphql/print-schema.js` after a build). This test
 * fails when it is out of date. Regenerate it with:
 *   UPDATE_SCHEMA=1 npx jest test/graphql/schema-file.test.ts
 */
import path from 'node:path';
import { buildGraphQLSchema, printGraphQLSchema } from '../../src/graphql/schema.js';
import { expectFileCurrent } from '../support/generated-file.js';

const FILE = path.resolve(__dirname, '../../schema.graphql');

test('schema.graphql matches the schema built from the code', async () => {
  const printed = printGraphQLSchema(await buildGraphQLSchema());
  expectFileCurrent(FILE, printed, 'UPDATE_SCHEMA', 'UPDATE_SCHEMA=1 npx jest test/graphql/schema-file.test.ts');
});
