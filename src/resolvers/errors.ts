/**
 * The GraphQL mapping of errors, done once (Apollo `formatError`, and graphql-ws `onNext`/`onError`):
 * - AppError (and zod errors) → `extensions.code` = the REST code, `extensions.details` = the REST details;
 * - GraphQL request errors (syntax, validation, our depth/cost/rate limits) keep their code;
 * - variable coercion errors (a wrong type in `variables`) become VALIDATION_ERROR with details.fields;
 * - anything else is INTERNAL_ERROR with a generic message (the cause is logged, never sent).
 * No stack traces, no SQL: only `message`, `locations`, `path` and `extensions { code, details }`.
 */
import { unwrapResolverError } from '@apollo/server/errors';
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { ZodError } from 'zod';
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

/**
 * `Variable "$input" got invalid value "x" at "input.memory"; Int cannot represent non-integer value: "x"`
 * `Variable "$input" got invalid value {...}; Field "name" of required type "String!" was not provided.`
 * → VALIDATION_ERROR { fields: { memory: "…" } } (the field path without the variable name for inputs).
 */
function coercionFields(message: string): Record<string, string> | null {
  const m = /^Variable "\$([^"]+)" got invalid value .*?(?: at "([^"]+)")?; (.*)$/s.exec(message);
  if (m) {
    const variable = m[1]!;
    let path = m[2] ?? variable;
    let reason = m[3]!.trim();
    const missing = /^Field "([^"]+)" of required type "([^"]+)" was not provided\.?$/.exec(reason);
    if (missing) {
      path = m[2] ? `${m[2]}.${missing[1]}` : `${variable}.${missing[1]}`;
      reason = 'is required';
    }
    const notDefined = /^Field "([^"]+)" is not defined by type/.exec(reason);
    if (notDefined) return null; // an unknown input field: a client bug, keep BAD_USER_INPUT
    const parts = path.split('.');
    const key = parts.length > 1 && variable === parts[0] && variable !== parts[parts.length - 1] ? parts.slice(1).join('.') : path;
    return { [key || variable]: reason.replace(/\.$/, '') };
  }
  const nn = /^Variable "\$([^"]+)" of (?:required|non-null) type "([^"]+)" (?:was not provided|must not be null)\.?$/.exec(message);
  if (nn) return { [nn[1]!]: 'is required' };
  return null;
}

const GENERIC = 'Something went wrong on our side. The error has been logged.';

export function formatGraphQLError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError {
  const original = unwrapResolverError(error);
  if (original instanceof AppError) return fromApp(formatted, original);
  if (original instanceof ZodError) return fromApp(formatted, toAppError(original));
  if (original instanceof GraphQLError) {
    // An error raised by GraphQL itself or by our plugins. Errors inside the GraphQLError (a wrapped cause)
    // are unwrapped first: a GraphQLError around an AppError is that AppError.
    if (original.originalError instanceof AppError) return fromApp(formatted, original.originalError);
    const code = (original.extensions?.code as string | undefined) ?? (formatted.extensions?.code as string | undefined);
    if (code === 'BAD_USER_INPUT') {
      const fields = coercionFields(original.message);
      if (fields) {
        return { message: 'The request contains invalid fields.', ...base(formatted), extensions: { code: 'VALIDATION_ERROR', details: { fields } } };
      }
    }
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
