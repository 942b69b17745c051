'use strict';
/**
 * Baseline for scenario 3: a bare `ws` server that produces the same console lines itself (same
 * burst pattern, same JSON envelope as the node console channel) and broadcasts each line to every
 * connected client: one JSON.stringify per line, one ws.send per client. Same slow-client policy as
 * the node agent (a client with more than 4 MiB unsent is terminated), so that memory is bounded.
 */
const { WebSocketServer, WebSocket } = require('ws');
const { runTicks } = require('../lib/ticker');

const MAX_BUFFERED = 4 * 1024 * 1024;
const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false, maxPayload: 64 * 1024 });
let dropped = 0;
let spamPrinted = 0; // numbers the lines as the demo game does (` #<k>`)

const hhmmss = () => new Date().toTimeString().slice(0, 8);

function broadcast(line, ts) {
  const msg = JSON.stringify({ type: 'console_output', data: { line, stream: 'stdout', ts } });
  for (const ws of wss.clients) {
    if (ws.readyState !== WebSocket.OPEN) continue;
    if (ws.bufferedAmount > MAX_BUFFERED) {
      dropped++;
      ws.terminate();
      continue;
    }
    ws.send(msg);
  }
}

async function drive(opts) {
  const r = await runTicks(opts, {
    onMarker: (now) => broadcast(`[${hhmmss()} INFO]: [Server] t=${now}`, new Date(now).toISOString()),
    onTick: (perTick) => {
      // A tick's lines all exist from its start and share its stamp, as a tick's burst does on the
      // panel's side: the demo game writes it in one write, and the agent stamps every line of what
      // it reads at once (src/agent/server/console.ts). So each line's latency counts the
      // broadcasts of the lines before it on both sides.
      const now = new Date();
      const ts = now.toISOString();
      const clock = now.toTimeString().slice(0, 8);
      for (let i = 1; i <= perTick; i++) broadcast(`[${clock} INFO]: spam line ${i} #${++spamPrinted}`, ts);
    },
  });
  return { lines: r.lines, markers: r.markers, ticks: r.ticks, lateTicks: r.lateTicks, elapsedMs: r.elapsedMs, droppedClients: dropped };
}

wss.on('listening', () => process.send({ type: 'ready', url: `ws://127.0.0.1:${wss.address().port}/console`, pid: process.pid }));
wss.on('connection', (ws) => {
  ws.on('message', (raw) => {
    // the same first message as the node console channel; answered like it
    try {
      if (JSON.parse(raw.toString()).type === 'auth') ws.send(JSON.stringify({ type: 'auth_success', data: { serverId: 'baseline', status: 'running' } }));
    } catch {
      /* ignore */
    }
  });
  ws.on('error', () => undefined);
});
process.on('message', async (m) => {
  if (m?.type === 'drive') process.send({ type: 'drive_done', ...(await drive(m)) });
  if (m?.type === 'close') {
    for (const ws of wss.clients) ws.terminate();
    wss.close(() => process.exit(0));
    setTimeout(() => process.exit(0), 3000).unref();
  }
});
process.on('disconnect', () => process.exit(0));
