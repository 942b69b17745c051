import { Router } from 'express';
import { isYaml } from '../http/body.js';
import type { Services } from '../services/index.js';
import { presentBlueprint, presentUser } from './presenters.js';
import { sendData, sendList, sendNoContent } from './respond.js';
import { parseAdminUsersQuery } from '../validation/admin.js';

/** `/admin/*` (admin only; the admin rate-limit bucket). Blueprints are read at `/blueprints` (everyone). */
export function adminRoutes(services: Services): Router {
  const r = Router();
  r.get('/users', async (req, res) => sendList(res, await services.admin.users(req.actor ?? null, parseAdminUsersQuery(req.query)), presentUser));
  r.get('/users/:id', async (req, res) => sendData(res, presentUser(await services.accounts.get(req.actor ?? null, req.params.id))));
  r.patch('/users/:id', async (req, res) => sendData(res, presentUser(await services.accounts.update(req.actor ?? null, req.params.id, req.body))));
  r.delete('/users/:id', async (req, res) => {
    await services.accounts.remove(req.actor ?? null, req.params.id);
    sendNoContent(res);
  });
  r.get('/stats', async (req, res) => sendData(res, await services.admin.stats(req.actor ?? null)));
  r.post('/nodes/:id/token', async (req, res) => sendData(res, await services.nodes.rotateToken(req.actor ?? null, req.params.id), 201));
  r.post('/blueprints', async (req, res) => sendData(res, presentBlueprint(await services.blueprints.create(req.actor ?? null, req.body), req.actor ?? null), 201));
  r.post('/blueprints/import', async (req, res) => {
    const actor = req.actor ?? null;
    const { blueprint, warnings } = isYaml(req) ? await services.blueprints.importEggYaml(actor, req.body) : await services.blueprints.importEgg(actor, req.body);
    // the warnings go with the blueprint: `meta` is the envelope's for lists (the seed's section 2)
    sendData(res, { ...(presentBlueprint(blueprint, actor) as object), warnings }, 201);
  });
  r.patch('/blueprints/:id', async (req, res) => sendData(res, presentBlueprint(await services.blueprints.update(req.actor ?? null, req.params.id, req.body), req.actor ?? null)));
  r.delete('/blueprints/:id', async (req, res) => {
    await services.blueprints.remove(req.actor ?? null, req.params.id);
    sendNoContent(res);
  });
  return r;
}
