/**
 * Prints the OpenAPI document built from the code, the same text as the committed /openapi.json:
 *   npm run openapi        (= npm run build && node dist/src/openapi/print.js > openapi.json)
 * or, without building:
 *   UPDATE_OPENAPI=1 npx jest test/openapi/document.test.ts
 */
import { openApiJson } from './document.js';

process.stdout.write(openApiJson());
