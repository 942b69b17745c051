import { Router } from 'express';
import type { Services } from '../services/index.js';
import { presentUser } from './presenters.js';
import { sendData, sendList } from './respond.js';
import { parseAdminUsersQuery } from '../validation/admin.js';

/** `/admin/*` (admin only; the admin rate-limit bucket). */
export function adminRoutes(services: Services): Router {
  const r = Router();
  r.get('/users', async (req, res) => sendList(res, await services.admin.users(req.actor ?? null, parseAdminUsersQuery(req.query)), presentUser));
  r.get('/stats', async (req, res) => sendData(res, await services.admin.stats(req.actor ?? null)));
  r.post('/nodes/:id/token', async (req, res) => sendData(res, await services.nodes.rotateToken(req.actor ?? null, req.params.id), 201));
  return r;
}
