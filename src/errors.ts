/**
 * The one error type of the domain. Services throw AppError; REST (src/http/errors.ts) and GraphQL
 * (src/resolvers/errors.ts) each map it once to their wire format.
 */
import { ForeignKeyConstraintViolationException } from '@mikro-orm/core';
import { ZodError } from 'zod';
import { childLogger } from './logger.js';

const log = childLogger('errors');

export type ErrorCode =
  | 'BAD_REQUEST'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'VALIDATION_ERROR'
  | 'ALREADY_EXISTS'
  | 'INVALID_STATE'
  | 'NODE_HAS_SERVERS'
  | 'NODE_UNAVAILABLE'
  | 'CAPACITY_EXCEEDED'
  | 'QUOTA_EXCEEDED'
  | 'INVALID_PATH'
  | 'DISK_LIMIT'
  | 'BACKUP_LIMIT'
  | 'FILE_TOO_LARGE'
  | 'INVALID_ARCHIVE'
  | 'RATE_LIMITED'
  | 'INTERNAL_ERROR';

const STATUS: Record<ErrorCode, number> = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  VALIDATION_ERROR: 422,
  ALREADY_EXISTS: 422,
  INVALID_STATE: 422,
  NODE_HAS_SERVERS: 422,
  NODE_UNAVAILABLE: 422,
  CAPACITY_EXCEEDED: 422,
  QUOTA_EXCEEDED: 422,
  INVALID_PATH: 422,
  DISK_LIMIT: 422,
  BACKUP_LIMIT: 422,
  FILE_TOO_LARGE: 422,
  INVALID_ARCHIVE: 422,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
};

export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'AppError';
    this.status = STATUS[code];
  }

  static badRequest(message: string, details?: Record<string, unknown>) {
    return new AppError('BAD_REQUEST', message, details);
  }
  static unauthorized(message = 'Authentication required: send a valid bearer token or session cookie.') {
    return new AppError('UNAUTHORIZED', message);
  }
  static forbidden(message = 'You are not allowed to do this.') {
    return new AppError('FORBIDDEN', message);
  }
  static notFound(what = 'Resource') {
    return new AppError('NOT_FOUND', `${what} not found.`);
  }
  /** 422 with details.fields: { field: message } */
  static validation(fields: Record<string, string>, message = 'The request contains invalid fields.') {
    return new AppError('VALIDATION_ERROR', message, { fields });
  }
  static alreadyExists(field: string, message: string) {
    return new AppError('ALREADY_EXISTS', message, { fields: { [field]: message } });
  }
  static invalidState(message: string, details?: Record<string, unknown>) {
    return new AppError('INVALID_STATE', message, details);
  }
  static nodeUnavailable(message = 'The node hosting this server cannot be reached right now.') {
    return new AppError('NODE_UNAVAILABLE', message);
  }
}

/** Turns a zod error into a 422 with one message per field path (`a.b`, or `body` for the root). */
export function fromZodError(err: ZodError): AppError {
  const fields: Record<string, string> = {};
  for (const issue of err.issues) {
    const key = issue.path.length ? issue.path.join('.') : 'body';
    if (!(key in fields)) fields[key] = issue.message;
  }
  return AppError.validation(fields);
}

/** Any thrown value as an AppError; unknown errors become a bare 500 (the cause is logged, never sent). */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof ZodError) return fromZodError(err);
  // a row the change points to (an account, a server) was deleted while it ran: the deletion won the race
  if (err instanceof ForeignKeyConstraintViolationException) {
    // logged, as a write that names a row that never existed would show here too
    log.warn({ constraint: (err as { constraint?: string }).constraint, err: err.message }, 'a write named a row deleted meanwhile (answered 422 INVALID_STATE)');
    return AppError.invalidState('Something this request refers to was deleted while it ran. Reload, then try again if it still applies.');
  }
  return new AppError('INTERNAL_ERROR', 'Something went wrong on our side. The error has been logged.');
}
