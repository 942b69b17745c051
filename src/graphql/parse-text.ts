/**
 * Operation text to a document, as the panel parses it outside Apollo (the WebSocket transport, the
 * rate-limit charges): at most 20,000 tokens, and a text nested so deeply that the parser runs out of
 * stack is a syntax error like any other (GRAPHQL_PARSE_FAILED), not an internal one.
 */
import { GraphQLError, parse, type DocumentNode } from 'graphql';

export const MAX_TOKENS = 20_000;

export function parseOperationText(text: string): DocumentNode {
  try {
    return parse(text, { maxTokens: MAX_TOKENS });
  } catch (err) {
    if (err instanceof GraphQLError) throw new GraphQLError(err.message, { ...err, extensions: { code: 'GRAPHQL_PARSE_FAILED' } });
    if (err instanceof RangeError) throw new GraphQLError('Syntax Error: the operation is nested too deeply to be read.', { extensions: { code: 'GRAPHQL_PARSE_FAILED' } });
    throw err;
  }
}
