/**
 * The HTTP gateway executes operations with graphql-jit (src/graphql/jit-executor.ts). Every operation
 * here is also executed by graphql-js's reference `execute` on the same schema, with the same caller
 * and a fresh context, and both answers must be the same: data, and errors (message, path, code).
 */
import { RequestContext } from '@mikro-orm/core';
import { execute, Kind, parse, type ExecutionResult, type GraphQLSchema } from 'graphql';
import { createLoaders, type GraphQLContext } from '../../src/graphql/context.js';
import { buildGraphQLSchema } from '../../src/graphql/schema.js';
import { coerceVariables } from '../../src/graphql/variables.js';
import { formatGraphQLError } from '../../src/resolvers/errors.js';
import { createNode } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { expectData, gql } from './gql.js';

let p: TestPlatform;
let schema: GraphQLSchema;
let admin: string;
let owner: { token: string; user: any };
let other: { token: string; user: any };
let serverId: string;
let nodeId: string;

beforeAll(async () => {
  p = await startTestPlatform();
  schema = await buildGraphQLSchema();
  admin = (await p.admin()).token;
  owner = await p.newUser('Owner');
  other = await p.newUser('Other');
  nodeId = (await createNode(p, admin)).id;
  const blueprints = expectData(await gql(p, '{ blueprints(limit: 100) { items { id } } }', undefined, { token: admin })).blueprints.items;
  for (let i = 0; i < 3; i++) {
    const input = { name: `parity ${i} ✓ "quoted" <b>`, nodeId, blueprintId: blueprints[i % blueprints.length].id, ownerId: owner.user.id, memory: 64, disk: 128 };
    const s = expectData(await gql(p, 'mutation($input: CreateServerInput!) { createServer(input: $input) { id } }', { input }, { token: admin })).createServer;
    serverId ??= s.id;
  }
});
afterAll(async () => p?.stop());

/** What a client compares: data, and each error's message, path and code. */
function comparable(r: { data?: unknown; errors?: readonly { message: string; path?: readonly (string | number)[]; extensions?: { code?: unknown } }[] }) {
  return {
    data: r.data ?? null,
    errors: (r.errors ?? []).map((e) => ({ message: e.message, path: e.path ?? null, code: e.extensions?.code ?? null })),
  };
}

async function reference(query: string, variables: Record<string, unknown> | undefined, token: string | undefined) {
  // as in the app: one MikroORM request context per operation
  return RequestContext.create(p.orm.em, () => referenceInContext(query, variables, token));
}

async function referenceInContext(query: string, variables: Record<string, unknown> | undefined, token: string | undefined) {
  const context: GraphQLContext = {
    actor: token ? await p.services.auth.authenticate(token) : null,
    services: p.services,
    req: { headers: {} } as GraphQLContext['req'],
    res: null,
    loaders: createLoaders(p.services),
  };
  const document = parse(query);
  // the same variable check as the gateway's (both transports), then formatError
  const operation = document.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION);
  const coerced = coerceVariables(schema, operation?.kind === Kind.OPERATION_DEFINITION ? (operation.variableDefinitions ?? []) : [], variables ?? {});
  const result = 'errors' in coerced ? { errors: coerced.errors } : ((await execute({ schema, document, contextValue: context, variableValues: variables })) as ExecutionResult);
  const errors = result.errors?.map((e) => formatGraphQLError(e.toJSON(), e));
  return comparable({ data: result.data, errors });
}

async function expectSame(query: string, variables: Record<string, unknown> | undefined, token: string | undefined) {
  const http = await gql(p, query, variables, { token });
  const viaHttp = comparable(http.body);
  expect(viaHttp).toEqual(await reference(query, variables, token));
  return viaHttp;
}

const PAGE = `query Page($limit: Int, $page: Int) {
  servers(limit: $limit, page: $page) {
    total page limit
    items { id name description status memory cpu disk createdAt updatedAt variables
            owner { id email } node { id name } blueprint { id name } }
  }
}`;

test('a page with its relations, as owner, other user and admin', async () => {
  const mine = await expectSame(PAGE, { limit: 20, page: 1 }, owner.token);
  expect((mine.data as any).servers.items).toHaveLength(3);
  expect((mine.data as any).servers.items[0].owner.id).toBe(owner.user.id);
  const theirs = await expectSame(PAGE, { limit: 20, page: 1 }, other.token);
  expect((theirs.data as any).servers.items).toEqual([]);
  await expectSame(PAGE, { limit: 2, page: 2 }, admin);
});

test('fragments, inline fragments, aliases, __typename and @skip/@include driven by variables', async () => {
  const q = `query Q($id: ID!, $withNode: Boolean!, $noOwner: Boolean = false) {
    first: server(id: $id) { __typename ...S node @include(if: $withNode) { name ... on Node { id } } }
    again: server(id: $id) { id owner @skip(if: $noOwner) { email } }
    me { __typename id role }
  }
  fragment S on Server { id name status owner { id } blueprint { __typename name } }`;
  for (const withNode of [true, false]) {
    for (const noOwner of [true, false]) {
      const r = await expectSame(q, { id: serverId, withNode, noOwner }, owner.token);
      expect(r.errors).toEqual([]);
      expect('node' in (r.data as any).first).toBe(withNode);
      expect('owner' in (r.data as any).again).toBe(!noOwner);
    }
  }
});

test('errors: anonymous, another user\'s server, an unknown id, a bad id, a bad enum and a wrong variable type', async () => {
  const one = 'query($id: ID!) { server(id: $id) { id name } me { id } }';
  const anon = await expectSame(one, { id: serverId }, undefined);
  expect(anon.errors.map((e) => e.code)).toContain('UNAUTHORIZED');
  expect(anon.data).toBeNull();
  const theirs = await expectSame(one, { id: serverId }, other.token);
  expect(theirs.errors[0]!.code).toBe('NOT_FOUND');
  expect(theirs.errors[0]!.path).toEqual(['server']);
  await expectSame(one, { id: '00000000-0000-4000-8000-000000000000' }, owner.token);
  await expectSame(one, { id: "' or 1=1 --" }, owner.token);
  const badType = await expectSame('query($l: Int) { servers(limit: $l) { total } }', { l: 'twenty' }, owner.token);
  expect(badType.errors[0]!.code).toBe('VALIDATION_ERROR');
  const badEnum = await expectSame('query($s: ServerStatus) { servers(status: $s) { total } }', { s: 'exploded' }, owner.token);
  expect(badEnum.errors).toHaveLength(1);
  const tooBig = await expectSame('{ servers(limit: 1000) { total } }', undefined, owner.token);
  expect(tooBig.errors[0]!.code).toBe('VALIDATION_ERROR');
});

test('admin-only fields and nested node data', async () => {
  const q = `{ nodes(limit: 10) { total items { id name status allocated { memory disk } } } adminStats { __typename } }`;
  const asAdmin = await expectSame(q, undefined, admin);
  expect(asAdmin.errors).toEqual([]);
  const asUser = await expectSame(q, undefined, owner.token);
  expect(asUser.errors.map((e) => e.code)).toContain('FORBIDDEN');
});
