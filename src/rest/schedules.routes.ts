import { Router } from 'express';
import type { Services } from '../services/index.js';
import { parsePagination } from '../validation/pagination.js';
import { presentSchedule, presentScheduleRun } from './presenters.js';
import { sendData, sendList, sendNoContent } from './respond.js';

/** A server's `/schedules`: CRUD, run now, and the history of runs. */
export function schedulesRoutes(services: Services): Router {
  const r = Router();
  const base = '/servers/:id/schedules';
  r.get(base, async (req, res) => sendList(res, await services.schedules.list(req.actor ?? null, req.params.id, parsePagination(req.query)), presentSchedule));
  r.post(base, async (req, res) => sendData(res, presentSchedule(await services.schedules.create(req.actor ?? null, req.params.id, req.body)), 201));
  r.get(`${base}/:scheduleId`, async (req, res) => sendData(res, presentSchedule(await services.schedules.get(req.actor ?? null, req.params.id, req.params.scheduleId))));
  r.patch(`${base}/:scheduleId`, async (req, res) =>
    sendData(res, presentSchedule(await services.schedules.update(req.actor ?? null, req.params.id, req.params.scheduleId, req.body))),
  );
  r.delete(`${base}/:scheduleId`, async (req, res) => {
    await services.schedules.remove(req.actor ?? null, req.params.id, req.params.scheduleId);
    sendNoContent(res);
  });
  r.post(`${base}/:scheduleId/run`, async (req, res) => sendData(res, presentScheduleRun(await services.schedules.run(req.actor ?? null, req.params.id, req.params.scheduleId)), 201));
  r.get(`${base}/:scheduleId/runs`, async (req, res) =>
    sendList(res, await services.schedules.runs(req.actor ?? null, req.params.id, req.params.scheduleId, parsePagination(req.query)), presentScheduleRun),
  );
  return r;
}
