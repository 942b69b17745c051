/**
 * README's configuration table against src/config.ts: each variable set to the default the table
 * gives loads the same configuration as leaving it unset (a default changed in one place and not the
 * other fails here), and a bad value stops the start with one problem naming the variable.
 */
import { readFileSync } from 'node:fs';
import { ConfigError, loadConfig } from '../../src/config.js';

/** `| `A`, `B` | meaning | `1`, `2` |` rows whose defaults are plain values, one per name. */
function documentedDefaults(): [name: string, value: string][] {
  const rows = readFileSync('README.md', 'utf8').split('\n').filter((l) => l.startsWith('| `'));
  const pairs: [string, string][] = [];
  for (const row of rows) {
    const cells = row.split(' | ');
    const names = [...cells[0]!.matchAll(/`([A-Z_]+)`/g)].map((m) => m[1]!);
    // a default cell of values only (`false` in production, else `true`: not a plain value)
    const values = /^(`[^`]+`(, `[^`]+`)*)$/.exec(cells[cells.length - 1]!.replace(/ \|$/, ''))?.[1];
    const given = values ? [...values.matchAll(/`([^`]+)`/g)].map((m) => m[1]!) : [];
    // NODE_ENV's default is `npm start`'s, not the loader's; MASTER_KEY's is a file the key is read from
    names.forEach((name, i) => given.length === names.length && !['NODE_ENV', 'MASTER_KEY'].includes(name) && pairs.push([name, given[i]!]));
  }
  return pairs;
}

const defaults = documentedDefaults();

test('the table gives plain defaults for the variables operators set most', () => {
  expect(defaults.map(([n]) => n)).toEqual(expect.arrayContaining(['PORT', 'SESSION_TTL_SECONDS', 'RATE_LIMIT_AUTH', 'CONSOLE_MAX_LINES_PER_SECOND', 'USER_MAX_DISK', 'BACKUP_LIMIT_DEFAULT', 'FILE_UPLOAD_MAX_BYTES', 'LOG_LEVEL']));
});

test.each(defaults)('%s=%s as the README gives it is the default', (name, value) => {
  expect(loadConfig({ [name]: value })).toEqual(loadConfig({}));
});

test.each([
  ['USER_MAX_MEMORY', '-1'], ['USER_MAX_CPU', '1.5'], ['CONSOLE_TOKEN_TTL_SECONDS', '601'], ['TRUST_PROXY', 'nonsense!'],
  ['ALLOW_SIGNUP', 'maybe'], ['USER_COMMAND_BLUEPRINTS', 'nobody'], ['PORT', 'x'], ['EMBEDDED_PG_PORT', '5432'],
])('a bad %s=%s stops the start with one problem naming it', (name, value) => {
  const err = (() => {
    try {
      loadConfig({ [name]: value });
    } catch (e) {
      return e;
    }
  })();
  expect(err).toBeInstanceOf(ConfigError);
  expect((err as ConfigError).problems).toHaveLength(1);
  expect((err as ConfigError).problems[0]).toContain(name);
});
