import { Router } from 'express';
import type { Services } from '../services/index.js';
import { parseInput } from '../validation/common.js';
import { deleteServerQuery, parseServerListQuery } from '../validation/servers.js';
import { presentServer } from './presenters.js';
import { sendData, sendList, sendNoContent } from './respond.js';

/** `/servers` CRUD and reinstall. Power actions and console tokens: src/rest/power.routes.ts. */
export function serversRoutes(services: Services): Router {
  const r = Router();
  r.get('/', async (req, res) => sendList(res, await services.servers.list(req.actor ?? null, parseServerListQuery(req.query)), presentServer));
  r.post('/', async (req, res) => sendData(res, presentServer(await services.servers.create(req.actor ?? null, req.body)), 201));
  r.get('/:id', async (req, res) => sendData(res, presentServer(await services.servers.get(req.actor ?? null, req.params.id))));
  r.patch('/:id', async (req, res) => sendData(res, presentServer(await services.servers.update(req.actor ?? null, req.params.id, req.body))));
  // the install goes on after the answer (the server is `installing`); 200 as every action (CONTRACT §1)
  r.post('/:id/reinstall', async (req, res) => sendData(res, presentServer(await services.servers.reinstall(req.actor ?? null, req.params.id))));
  r.delete('/:id', async (req, res) => {
    await services.servers.remove(req.actor ?? null, req.params.id, parseInput(deleteServerQuery, { force: req.query.force }));
    sendNoContent(res);
  });
  return r;
}
