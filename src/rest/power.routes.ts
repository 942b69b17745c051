/** Routes that reach the node agent: power actions, console tokens, node statistics. */
import { Router } from 'express';
import type { Services } from '../services/index.js';
import type { PowerAction } from '../shared/node-protocol.js';
import { presentServer } from './presenters.js';
import { sendData } from './respond.js';

export function powerRoutes(services: Services): Router {
  const r = Router();
  for (const action of ['start', 'stop', 'restart', 'kill'] as PowerAction[]) {
    r.post(`/servers/:id/${action}`, async (req, res) => sendData(res, presentServer(await services.power.power(req.actor ?? null, req.params.id, action))));
  }
  r.get('/servers/:id/console-token', async (req, res) => sendData(res, await services.power.consoleToken(req.actor ?? null, req.params.id)));
  r.get('/nodes/:id/stats', async (req, res) => sendData(res, await services.power.nodeStats(req.actor ?? null, req.params.id)));
  return r;
}
