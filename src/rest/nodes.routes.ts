import { Router } from 'express';
import type { Services } from '../services/index.js';
import { presentNode } from './presenters.js';
import { sendData, sendList, sendNoContent } from './respond.js';
import { parsePagination } from '../validation/pagination.js';

/** `/nodes` (admin only). `GET /nodes/:id/stats`: src/rest/power.routes.ts. */
export function nodesRoutes(services: Services): Router {
  const r = Router();
  r.get('/', async (req, res) => sendList(res, await services.nodes.list(req.actor ?? null, parsePagination(req.query)), presentNode));
  r.post('/', async (req, res) => {
    const { token, ...view } = await services.nodes.create(req.actor ?? null, req.body);
    sendData(res, { ...presentNode(view), token: token.token }, 201);
  });
  r.get('/:id', async (req, res) => sendData(res, presentNode(await services.nodes.get(req.actor ?? null, req.params.id))));
  r.patch('/:id', async (req, res) => sendData(res, presentNode(await services.nodes.update(req.actor ?? null, req.params.id, req.body))));
  r.delete('/:id', async (req, res) => {
    await services.nodes.remove(req.actor ?? null, req.params.id);
    sendNoContent(res);
  });
  return r;
}
