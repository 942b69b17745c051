/**
 * Apollo Server on Express: the request as Apollo's HTTPGraphQLRequest, Apollo's response written back.
 *
 * It does what `@as-integrations/express5` does, minus two costs the benchmark's profile showed on every
 * request: the query string is cut from `req.url` instead of going through the legacy `url.parse`, and
 * the body is written with `res.end` instead of Express's `res.send`, which hashes every body for an
 * ETag (never useful here: operations are POSTed, and GET operations are not cached by anyone).
 * Errors go to Express's error handler (the router's graphqlErrorHandler).
 */
import { HeaderMap, type ApolloServer, type BaseContext, type HTTPGraphQLRequest } from '@apollo/server';
import type { Request, RequestHandler, Response } from 'express';

export function apolloExpress<TContext extends BaseContext>(server: ApolloServer<TContext>, context: (req: Request, res: Response) => Promise<TContext>): RequestHandler {
  server.assertStarted('apolloExpress()');
  return async (req, res, next) => {
    try {
      const headers = new HeaderMap();
      for (const key in req.headers) {
        const value = req.headers[key];
        if (value !== undefined) headers.set(key, Array.isArray(value) ? value.join(', ') : value);
      }
      const q = req.url.indexOf('?');
      const httpGraphQLRequest: HTTPGraphQLRequest = {
        method: req.method.toUpperCase(),
        headers,
        search: q < 0 ? '' : req.url.slice(q),
        body: req.body,
      };
      const response = await server.executeHTTPGraphQLRequest({ httpGraphQLRequest, context: () => context(req, res) });
      for (const [key, value] of response.headers) res.setHeader(key, value);
      res.statusCode = response.status ?? 200;
      if (response.body.kind === 'complete') {
        res.setHeader('content-length', Buffer.byteLength(response.body.string));
        res.end(response.body.string);
        return;
      }
      // incremental delivery (@defer/@stream): written as Apollo yields the parts
      for await (const chunk of response.body.asyncIterator) res.write(chunk);
      res.end();
    } catch (err) {
      if (res.headersSent) {
        res.destroy(err instanceof Error ? err : undefined);
        return;
      }
      next(err);
    }
  };
}
