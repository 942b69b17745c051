import type { Request } from 'express';
import type { GraphQLContext } from '../graphql/context.js';

/**
 * The GraphQL boundary's rule for null: on a nullable argument or input field, an explicit `null`
 * (what generated clients send for an unset variable) means "not given", exactly as if the client had
 * left it out, so the REST validation behind the resolver sees what REST sees for an absent field and
 * applies its default. The exception is a field whose null means something, documented on the field
 * (e.g. `UpdateBlueprintInput.install`, "null: no install script"): its caller names it in `keepNull`
 * and the null is passed on; `keepNull: true` keeps every null (an input whose nulls all mean
 * something as they were sent: a blueprint's variables, config files and defaults).
 *
 * Every resolver hands its arguments and input objects to the services through this function:
 * `given({ page, limit })`, `given(input)`, `given(input, { keepNull: ['install'] })`. It is shallow:
 * nested input objects (a list of tasks…) go through it too; JSON scalars are the client's data and
 * are left as they are.
 */
export function given<T extends object>(fields: T | null | undefined, options: { keepNull?: readonly string[] | true } = {}): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!fields) return out;
  const keep = options.keepNull ?? [];
  for (const [k, v] of Object.entries(fields)) {
    if (v === undefined || (v === null && keep !== true && !keep.includes(k))) continue;
    out[k] = v;
  }
  return out;
}

/** The Express request of an HTTP operation (null over WebSocket). */
export function httpRequest(ctx: GraphQLContext): Request | null {
  return ctx.res ? (ctx.req as Request) : null;
}
