import pino, { type Logger } from 'pino';

/** One structured logger for the whole process; child loggers add `component`. Secrets are redacted. */
export const logger: Logger = pino({
  level: process.env.LOG_LEVEL ?? 'info',
  base: { pid: process.pid },
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
