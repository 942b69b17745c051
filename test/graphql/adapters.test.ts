/**
 * Routes and resolvers are adapters over the services: no database access in the GraphQL layer,
 * the resolvers or the REST routes (the statements live in src/services), and no REST query string
 * handed to a service where GraphQL has typed arguments.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const SRC = path.join(__dirname, '..', '..', 'src');
const ADAPTERS = ['graphql', 'http', 'resolvers', 'rest'];
/** Database access: the pooled reader, raw execution, the entity manager's queries. */
const DATABASE = /\breadRows\b|\.execute\(|getConnection\(|createQueryBuilder|\bem\.(find|findOne|findAndCount|count|nativeUpdate|nativeDelete|persist|flush)\b|\bselect\s+[\w"*].*\bfrom\b/;

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []));
}

test('no database access in src/graphql, src/http, src/resolvers or src/rest', () => {
  const offenders = ADAPTERS.flatMap((d) => files(path.join(SRC, d)))
    .flatMap((f) => readFileSync(f, 'utf8').split('\n').map((line, i) => ({ f, i, line })))
    .filter(({ line }) => !/^\s*(\*|\/\/)/.test(line) && DATABASE.test(line))
    .map(({ f, i, line }) => `${path.relative(SRC, f)}:${i + 1}: ${line.trim()}`);
  expect(offenders).toEqual([]);
});

test('GraphQL resolvers pass typed values to services, never strings made for a REST query parser', () => {
  const offenders = files(path.join(SRC, 'resolvers'))
    .flatMap((f) => readFileSync(f, 'utf8').split('\n').map((line, i) => ({ f, i, line })))
    .filter(({ line }) => /services\.\w+\.\w+\(.*String\(/.test(line))
    .map(({ f, i, line }) => `${path.relative(SRC, f)}:${i + 1}: ${line.trim()}`);
  expect(offenders).toEqual([]);
});

test('services take typed arguments: no method takes an untyped id or query, no REST query object reaches one', () => {
  const untyped = files(path.join(SRC, 'services'))
    .flatMap((f) => readFileSync(f, 'utf8').split('\n').map((line, i) => ({ f, i, line })))
    .filter(({ line }) => /^\s+async \w+\(/.test(line) && /\b(id|\w+Id|query): unknown\b/.test(line))
    .map(({ f, i, line }) => `${path.relative(SRC, f)}:${i + 1}: ${line.trim()}`);
  const rawQueries = files(path.join(SRC, 'rest'))
    .flatMap((f) => readFileSync(f, 'utf8').split('\n').map((line, i) => ({ f, i, line })))
    .filter(({ line }) => /services\.\w+\.\w+\([^)]*\breq\.query\b(?!\.)/.test(line) && !/parse\w+\(req\.query\)/.test(line))
    .map(({ f, i, line }) => `${path.relative(SRC, f)}:${i + 1}: ${line.trim()}`);
  expect({ untyped, rawQueries }).toEqual({ untyped: [], rawQueries: [] });
});
