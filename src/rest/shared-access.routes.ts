import { Router } from 'express';
import type { Services } from '../services/index.js';
import { parsePagination } from '../validation/pagination.js';
import { presentActivity, presentPermission, presentSubuser } from './presenters.js';
import { sendData, sendList, sendNoContent } from './respond.js';
import { PERMISSION_CATALOGUE } from '../permissions/keys.js';
import { parseActivityQuery } from '../validation/activity.js';

/** `/permissions`, a server's `/subusers`, and the three views of the activity log. */
export function sharedAccessRoutes(services: Services): Router {
  const r = Router();
  r.get('/permissions', (req, res) => {
    services.users.me(req.actor ?? null);
    sendData(res, PERMISSION_CATALOGUE.map(presentPermission));
  });
  r.get('/servers/:id/subusers', async (req, res) =>
    sendList(res, await services.subusers.list(req.actor ?? null, req.params.id, parsePagination(req.query)), presentSubuser),
  );
  r.post('/servers/:id/subusers', async (req, res) => sendData(res, presentSubuser(await services.subusers.create(req.actor ?? null, req.params.id, req.body)), 201));
  r.patch('/servers/:id/subusers/:userId', async (req, res) =>
    sendData(res, presentSubuser(await services.subusers.update(req.actor ?? null, req.params.id, req.params.userId, req.body))),
  );
  r.delete('/servers/:id/subusers/:userId', async (req, res) => {
    await services.subusers.remove(req.actor ?? null, req.params.id, req.params.userId);
    sendNoContent(res);
  });
  r.get('/servers/:id/activity', async (req, res) => sendList(res, await services.activity.forServer(req.actor ?? null, req.params.id, parseActivityQuery(req.query)), presentActivity));
  r.get('/users/me/activity', async (req, res) => sendList(res, await services.activity.mine(req.actor ?? null, parseActivityQuery(req.query)), presentActivity));
  r.get('/admin/activity', async (req, res) => sendList(res, await services.activity.all(req.actor ?? null, parseActivityQuery(req.query)), presentActivity));
  return r;
}
