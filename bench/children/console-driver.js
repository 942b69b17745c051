'use strict';
/**
 * Drives the demo game server's output for scenario 3, from its own process so that the readers'
 * load does not delay it: console-channel connections (commands are rate limited to 20/s per
 * connection) take turns sending `spam <n>` every tick, plus `say t=<ms>` markers whose text carries
 * the send time (end-to-end latency: stdin → game → stdout → agent → subscriber).
 */
const WebSocket = require('ws');
const { runTicks } = require('../lib/ticker');

const conns = [];

function connect(url, token) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    const t = setTimeout(() => reject(new Error('driver connection: no auth_success in 10 s')), 10_000);
    const c = { ws, closed: null, errors: 0, errorSamples: [] };
    ws.on('open', () => ws.send(JSON.stringify({ type: 'auth', token })));
    ws.on('message', (raw) => {
      const s = raw.toString();
      if (s.startsWith('{"type":"auth_success"')) {
        clearTimeout(t);
        resolve(c);
      } else if (s.startsWith('{"type":"error"')) {
        c.errors++;
        if (c.errorSamples.length < 3) c.errorSamples.push(s.slice(0, 200));
      }
    });
    ws.on('close', (code) => {
      c.closed = code;
      clearTimeout(t);
      reject(new Error(`driver connection closed (${code})`));
    });
    ws.on('error', () => undefined);
  });
}

async function drive(opts) {
  let k = 0;
  const send = (command) => {
    const c = conns[k++ % conns.length];
    if (c.ws.readyState === WebSocket.OPEN) c.ws.send(JSON.stringify({ type: 'command', data: command }));
  };
  const r = await runTicks(opts, { onMarker: (now) => send(`say t=${now}`), onTick: (perTick) => send(`spam ${perTick}`) });
  return {
    ...r,
    errors: conns.reduce((a, c) => a + c.errors, 0),
    errorSamples: conns.flatMap((c) => c.errorSamples).slice(0, 3),
    closed: conns.filter((c) => c.closed !== null).length,
  };
}

process.on('message', async (m) => {
  try {
    if (m?.type === 'connect') {
      for (const c of conns.splice(0)) c.ws.terminate();
      for (const token of m.tokens) conns.push(await connect(m.url, token));
      for (const c of conns) c.ws.removeAllListeners('close').on('close', (code) => (c.closed = code));
      process.send({ type: 'connect_done' });
    }
    if (m?.type === 'drive') process.send({ type: 'drive_done', ...(await drive(m)) });
    if (m?.type === 'close') {
      for (const c of conns) c.ws.terminate();
      process.exit(0);
    }
  } catch (err) {
    process.send({ type: `${m?.type}_done`, error: String(err.message || err) });
  }
});
process.on('disconnect', () => process.exit(0));
process.send({ type: 'ready', pid: process.pid });
