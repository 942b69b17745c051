/** An error with an HTTP status and a machine-readable code, rendered as `{ error: { code, message, details } }`. */
export class AgentError extends Error {
  constructor(
    public readonly status: number,
    public readonly code: string,
    message: string,
    public readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'AgentError';
  }
}

export const invalidState = (message: string): AgentError => new AgentError(422, 'INVALID_STATE', message);
export const notFound = (message = 'Not found'): AgentError => new AgentError(404, 'NOT_FOUND', message);
