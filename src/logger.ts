import pino, { type Logger } from 'pino';

/**
 * Errors are logged by type, message and code; the stack only at debug/trace level, so that normal
 * logs never carry stack traces (or SQL with values) that might hold user data.
 */
function serializeError(err: unknown): Record<string, unknown> {
  if (!(err instanceof Error)) return { message: String(err) };
  const e = err as Error & { code?: unknown };
  const out: Record<string, unknown> = { type: e.name, message: e.message.slice(0, 500) };
  if (e.code !== undefined) out.code = e.code;
  if (logger.isLevelEnabled('debug')) out.stack = e.stack;
  return out;
}

/** One structured logger for the whole process; child loggers add `component`. Secrets are redacted. */
export const logger: Logger = pino({
  level: process.env.LOG_LEVEL ?? 'info',
  base: { pid: process.pid },
  serializers: { err: serializeError },
  redact: {
    paths: [
      'req.headers.authorization',
      'req.headers.cookie',
      'res.headers["set-cookie"]',
      '*.password',
      '*.currentPassword',
      '*.token',
      '*.secret',
    ],
    censor: '[redacted]',
  },
});

export function childLogger(component: string): Logger {
  return logger.child({ component });
}
