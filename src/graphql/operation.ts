/**
 * Which operation of a document a request runs, checked before anything executes (HTTP and
 * graphql-ws alike): a missing or ambiguous operation is the client's mistake, a 400 BAD_REQUEST,
 * never a failure inside the executor.
 */
import { getOperationAST, type DocumentNode, type GraphQLError, type OperationDefinitionNode } from 'graphql';
import { requestError } from '../resolvers/errors.js';

export function resolveOperation(document: DocumentNode, operationName: string | null | undefined): OperationDefinitionNode | GraphQLError {
  return getOperationAST(document, operationName ?? undefined) ?? operationNotFound(operationName);
}

/** The 400 for a document without the operation asked for (or with several and none named). */
export function operationNotFound(operationName: string | null | undefined): GraphQLError {
  return operationName
    ? requestError('BAD_REQUEST', `The document has no operation named "${operationName}".`, { operationName })
    : requestError('BAD_REQUEST', 'The document has several operations: say which one to run with operationName.');
}
