/**
 * The migrations and the entities describe the same schema: after every migration has run, the ORM
 * finds nothing to change. A new entity or column without its migration (or the reverse) fails here.
 */
import { startTestPlatform, type TestPlatform } from '../support/harness.js';

let p: TestPlatform;
beforeAll(async () => {
  p = await startTestPlatform();
});
afterAll(async () => {
  await p?.stop();
});

test('the migrated database matches the entities', async () => {
  const sql = await p.orm.getSchemaGenerator().getUpdateSchemaSQL({ wrap: false, safe: false, dropTables: true });
  expect(sql.trim()).toBe('');
});
