/**
 * Prints the gateway's schema (SDL) built from the code, the same text as the committed /schema.graphql:
 *   npm run build && node dist/src/graphql/print-schema.js > schema.graphql
 * or, without building:
 *   UPDATE_SCHEMA=1 npx jest test/graphql/schema-file.test.ts
 */
import 'reflect-metadata';
import { buildGraphQLSchema, printGraphQLSchema } from './schema.js';

buildGraphQLSchema()
  .then((schema) => process.stdout.write(printGraphQLSchema(schema)))
  .catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
