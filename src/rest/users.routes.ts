import { Router } from 'express';
import type { Services } from '../services/index.js';
import { parsePagination } from '../validation/pagination.js';
import { presentApiToken, presentNodeChoice, presentUser } from './presenters.js';
import { sendData, sendList, sendNoContent } from './respond.js';

export function usersRoutes(services: Services): Router {
  const r = Router();
  r.get('/me', (req, res) => sendData(res, presentUser(services.users.me(req.actor ?? null))));
  r.patch('/me', async (req, res) => sendData(res, presentUser(await services.users.updateMe(req.actor ?? null, req.body))));
  r.get('/me/nodes', async (req, res) => {
    const page = await services.nodes.choices(req.actor ?? null, parsePagination(req.query));
    sendList(res, page, presentNodeChoice);
  });
  r.get('/me/api-tokens', async (req, res) => {
    const actor = req.actor ?? null;
    services.users.me(actor); // 401 before 422 for anonymous callers
    sendList(res, await services.users.listApiTokens(actor, parsePagination(req.query)), presentApiToken);
  });
  r.post('/me/api-tokens', async (req, res) => {
    const { token, secret } = await services.users.createApiToken(req.actor ?? null, req.body);
    sendData(res, { ...presentApiToken(token), token: secret }, 201);
  });
  r.delete('/me/api-tokens/:id', async (req, res) => {
    await services.users.revokeApiToken(req.actor ?? null, req.params.id);
    sendNoContent(res);
  });
  return r;
}
