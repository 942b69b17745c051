import type { Request } from 'express';
import type { GraphQLContext } from '../graphql/context.js';

/** An input object as a plain object without absent fields (what REST would get from JSON). */
export function plain<T extends object>(input: T | null | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!input) return out;
  for (const [k, v] of Object.entries(input)) if (v !== undefined) out[k] = v;
  return out;
}

/** The Express request of an HTTP operation (null over WebSocket). */
export function httpRequest(ctx: GraphQLContext): Request | null {
  return ctx.res ? (ctx.req as Request) : null;
}
