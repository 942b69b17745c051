import { Router } from 'express';
import type { Services } from '../services/index.js';
import { presentBlueprint } from './presenters.js';
import { sendData, sendList } from './respond.js';
import { parsePagination } from '../validation/pagination.js';

export function blueprintsRoutes(services: Services): Router {
  const r = Router();
  r.get('/', async (req, res) => sendList(res, await services.blueprints.list(req.actor ?? null, parsePagination(req.query)), (b) => presentBlueprint(b, req.actor ?? null)));
  r.get('/:id', async (req, res) => sendData(res, presentBlueprint(await services.blueprints.get(req.actor ?? null, req.params.id), req.actor ?? null)));
  return r;
}
