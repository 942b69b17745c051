import { Router, type Request, type Response } from 'express';
import { sessionCookieOptions, SESSION_COOKIE } from '../http/auth.js';
import { clientAddress } from '../http/limit-middleware.js';
import type { SignedIn } from '../services/auth.service.js';
import type { Services } from '../services/index.js';
import { presentUser } from './presenters.js';
import { sendData, sendNoContent } from './respond.js';

function signedIn(req: Request, res: Response, s: SignedIn, status: number) {
  res.cookie(SESSION_COOKIE, s.token, sessionCookieOptions(req, s.session.expiresAt));
  sendData(res, { user: presentUser(s.user), token: s.token, expiresAt: s.session.expiresAt }, status);
}

export function authRoutes(services: Services): Router {
  const r = Router();
  r.post('/signup', async (req, res) => signedIn(req, res, await services.auth.signup(req.body, { ip: clientAddress(req) }), 201));
  r.post('/signin', async (req, res) => signedIn(req, res, await services.auth.signin(req.body, { ip: clientAddress(req) }), 200));
  r.post('/signout', async (req, res) => {
    await services.auth.signout(req.actor ?? null);
    res.clearCookie(SESSION_COOKIE, { path: '/' });
    sendNoContent(res);
  });
  r.get('/session', (req, res) => {
    const s = services.auth.session(req.actor ?? null);
    sendData(res, { session: s.session, user: presentUser(s.user) });
  });
  return r;
}
