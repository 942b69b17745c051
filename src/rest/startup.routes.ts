/** `/servers/:id/startup`: one-liners over StartupService. */
import { Router } from 'express';
import type { Services } from '../services/index.js';
import { presentStartup } from './presenters.js';
import { sendData } from './respond.js';

export function startupRoutes(services: Services): Router {
  const r = Router();
  const s = services.startup;
  r.get('/servers/:id/startup', async (req, res) => sendData(res, presentStartup(await s.get(req.actor ?? null, req.params.id))));
  r.put('/servers/:id/startup', async (req, res) => sendData(res, presentStartup(await s.update(req.actor ?? null, req.params.id, req.body))));
  return r;
}
