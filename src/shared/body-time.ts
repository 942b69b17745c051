/**
 * How long a request's body may take to arrive, on the panel and on the agent. Node's server-wide
 * `requestTimeout` cuts off every request not received whole in time, uploads included (a 1 GiB
 * upload had to arrive within a minute, whatever the user's line). Both servers set it to 0 and ask
 * this for each request instead: a body must arrive whole within `ms`, except a streamed upload's,
 * which may take as long as it needs but never stall for `ms`. Headers stay bounded by the servers'
 * `headersTimeout`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** What a server does with a request whose body came too late (an answer, then the socket closed). */
export type LateBody = (req: IncomingMessage, res: ServerResponse) => void;

const hasBody = (req: IncomingMessage): boolean => req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;

export function limitBodyTime(req: IncomingMessage, res: ServerResponse, opts: { ms: number; streamed: boolean; late: LateBody }): void {
  if (!opts.ms || req.complete || !hasBody(req)) return;
  const socket = req.socket;
  const late = () => {
    stop();
    opts.late(req, res);
  };
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    if (timer) clearTimeout(timer);
    if (!opts.streamed) return;
    socket.off('timeout', late);
    // the socket's idle timer is this request's until its answer ends; then it is Node's keep-alive timer
    if (!res.writableFinished) socket.setTimeout(0);
  };
  if (opts.streamed) {
    // the socket's idle timer: any byte that comes restarts it
    socket.setTimeout(opts.ms);
    socket.once('timeout', late);
  } else {
    timer = setTimeout(late, opts.ms);
  }
  req.once('end', stop);
  req.once('close', stop);
}
