/**
 * The client's address, the one rule for every protocol: the connection's peer, or, when the panel sits
 * behind a reverse proxy it trusts (TRUST_PROXY), the address that proxy reports in X-Forwarded-For.
 * Without TRUST_PROXY the header is ignored, so nobody can claim another address. Express answers
 * `req.ip` with the same rule (the app gets the same trust function); a WebSocket upgrade reads it
 * from the HTTP server that accepted the connection.
 */
import type { IncomingMessage, Server } from 'node:http';
import proxyaddr from 'proxy-addr';

export type TrustSetting = boolean | number | string[];
export type Trust = (address: string, hop: number) => boolean;

const TRUST = Symbol('hostpanel.trustProxy');

/** The trust function of a TRUST_PROXY setting (false, true, a hop count, or addresses/CIDRs). */
export function compileTrust(setting: TrustSetting): Trust {
  if (setting === false) return () => false;
  if (setting === true) return () => true;
  if (typeof setting === 'number') return (_a, hop) => hop < setting;
  return proxyaddr.compile(setting);
}

/** Makes `server`'s connections use `trust` (for requests that do not go through Express). */
export function useTrust(server: Server, trust: Trust): void {
  (server as Server & { [TRUST]?: Trust })[TRUST] = trust;
}

export function clientAddress(req: Pick<IncomingMessage, 'socket' | 'headers'> & { ip?: string | undefined }): string {
  if (typeof req.ip === 'string') return req.ip;
  const trust = (req.socket as { server?: Server & { [TRUST]?: Trust } } | undefined)?.server?.[TRUST];
  try {
    if (trust) return proxyaddr(req as IncomingMessage, trust);
  } catch {
    // a malformed X-Forwarded-For: the peer's address
  }
  return req.socket?.remoteAddress ?? 'unknown';
}
