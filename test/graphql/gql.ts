/** A tiny GraphQL-over-HTTP client for the gateway tests (real fetch against the running panel). */
import type { TestPlatform } from '../support/harness.js';

export interface GqlReply<T = any> {
  status: number;
  headers: Headers;
  body: { data?: T | null; errors?: Array<{ message: string; path?: string[]; extensions: { code: string; details: Record<string, any> } }> };
  text: string;
}

export interface GqlOptions {
  token?: string | undefined;
  cookie?: string;
  headers?: Record<string, string>;
  operationName?: string;
}

export async function gql<T = any>(p: TestPlatform, query: string, variables?: Record<string, unknown>, opts: GqlOptions = {}): Promise<GqlReply<T>> {
  const r = await p.request('POST', '/graphql', {
    token: opts.token,
    ...(opts.cookie ? { cookie: opts.cookie } : {}),
    headers: opts.headers ?? {},
    body: { query, ...(variables ? { variables } : {}), ...(opts.operationName ? { operationName: opts.operationName } : {}) },
  });
  return { status: r.status, headers: r.headers, body: r.body, text: r.text };
}

/** The first error's code (and asserts there is exactly one error and no stack/SQL leaked). */
export function errorCode(r: GqlReply): string | undefined {
  expect(r.text).not.toMatch(/stacktrace|at .*\.(js|ts):\d+|select |insert /i);
  return r.body.errors?.[0]?.extensions?.code;
}

export function expectGqlError(r: GqlReply, code: string, status = 200): void {
  expect({ status: r.status, code: errorCode(r) }).toEqual({ status, code });
  const e = r.body.errors![0]!;
  expect(typeof e.message).toBe('string');
  expect(typeof e.extensions.details).toBe('object');
}

export function expectData(r: GqlReply): any {
  if (r.body.errors?.length || r.status !== 200) throw new Error(`unexpected GraphQL errors: ${r.status} ${r.text}`);
  return r.body.data;
}
