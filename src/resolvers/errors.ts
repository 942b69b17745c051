/**
 * The GraphQL mapping of errors, done once (Apollo `formatError`, graphql-ws `onNext`/`onError`, and
 * the requests refused before Apollo runs):
 * - AppError (and zod errors) → `extensions.code` = the REST code, `extensions.details` = the REST details;
 * - GraphQL request errors (syntax, validation, our depth/cost/rate limits) keep their code;
 * - variable coercion errors arrive as AppErrors already (src/graphql/variables.ts);
 * - anything else is INTERNAL_ERROR with a generic message (the cause is logged, never sent).
 * No stack traces, no SQL: only `message`, `locations`, `path` and `extensions { code, details }`.
 */
import { unwrapResolverError } from '@apollo/server/errors';
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { AppError, toAppError } from '../errors.js';
import { childLogger } from '../logger.js';

const log = childLogger('graphql');

/** An AppError as a GraphQLError (for errors raised outside resolvers, e.g. in plugins or ws hooks). */
export function graphQLErrorOf(err: AppError, httpStatus?: number): GraphQLError {
  return new GraphQLError(err.message, {
    originalError: err,
    extensions: { code: err.code, details: err.details ?? {}, ...(httpStatus ? { http: { status: httpStatus } } : {}) },
  });
}

/** The body of a GraphQL request refused before GraphQL runs (body, CSRF, rate limit): `{ errors: [one] }`. */
export function graphQLErrorBody(err: AppError): { errors: GraphQLFormattedError[] } {
  return { errors: [formatGraphQLError(graphQLErrorOf(err).toJSON(), err)] };
}

/** A request-level GraphQL error with our own code (QUERY_TOO_DEEP, QUERY_TOO_COMPLEX, …), HTTP 400. */
export function requestError(code: string, message: string, details: Record<string, unknown> = {}): GraphQLError {
  return new GraphQLError(message, { extensions: { code, details, http: { status: 400 } } });
}

function base(formatted: GraphQLFormattedError): Pick<GraphQLFormattedError, 'locations' | 'path'> {
  const out: Pick<GraphQLFormattedError, 'locations' | 'path'> = {};
  if (formatted.locations) (out as { locations?: unknown }).locations = formatted.locations;
  if (formatted.path) (out as { path?: unknown }).path = formatted.path;
  return out;
}

function fromApp(formatted: GraphQLFormattedError, err: AppError): GraphQLFormattedError {
  if (err.code === 'INTERNAL_ERROR') log.error({ err }, 'graphql internal error');
  return { message: err.message, ...base(formatted), extensions: { code: err.code, details: err.details ?? {} } };
}

const GENERIC = 'Something went wrong on our side. The error has been logged.';

export function formatGraphQLError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError {
  const original = unwrapResolverError(error);
  if (original instanceof AppError) return fromApp(formatted, original);
  // the domain's other known errors (input rules, a deletion that won a race), mapped as REST maps them
  const known = original instanceof GraphQLError ? null : toAppError(original);
  if (known && known.code !== 'INTERNAL_ERROR') return fromApp(formatted, known);
  if (original instanceof GraphQLError) {
    // An error raised by GraphQL itself or by our plugins. Errors inside the GraphQLError (a wrapped cause)
    // are unwrapped first: a GraphQLError around an AppError is that AppError.
    if (original.originalError instanceof AppError) return fromApp(formatted, original.originalError);
    const code = (original.extensions?.code as string | undefined) ?? (formatted.extensions?.code as string | undefined);
    if (code && code !== 'INTERNAL_SERVER_ERROR' && original.path === undefined) {
      const details = (original.extensions?.details as Record<string, unknown> | undefined) ?? {};
      return { message: original.message, ...base(formatted), extensions: { code, details } };
    }
    if (code && code !== 'INTERNAL_SERVER_ERROR' && original.extensions?.code) {
      return { message: original.message, ...base(formatted), extensions: { code, details: (original.extensions.details as object) ?? {} } };
    }
  }
  log.error({ err: original }, 'graphql internal error');
  return { message: GENERIC, ...base(formatted), extensions: { code: 'INTERNAL_ERROR', details: {} } };
}
