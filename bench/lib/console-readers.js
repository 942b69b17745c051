'use strict';
/**
 * The readers of scenario 3, one WebSocket each: the node console channel (per line, or in batches
 * after `options { batch: true }`) and GraphQL subscriptions over graphql-ws (`consoleOutput` per line,
 * `consoleBatches`). A stalled reader pauses its socket once subscribed and never reads again.
 * A channel without batches (the node answers `options` with `error` UNKNOWN_TYPE, GraphQL refuses
 * `consoleBatches` in validation) rejects with an error marked `notAvailable`.
 */
const WebSocket = require('ws');
const { newRecord, onLineFrame, onBatchFrame } = require('./console-frames');

const LINE_DOCUMENT = 'subscription($id: ID!) { consoleOutput(serverId: $id) { line ts } }';
const BATCH_DOCUMENT = 'subscription($id: ID!) { consoleBatches(serverId: $id) { lines { line ts seq } skipped } }';
// a subscription that has no history to send yet counts as subscribed after this long without an error
const SUBSCRIBED_AFTER_MS = 2000;

function notAvailable(message) {
  const err = new Error(message);
  err.notAvailable = true;
  return err;
}

/** A reader's socket, handed to `track` at once: one that never subscribes must still be closed. */
function socket(url, protocol, track) {
  const ws = new WebSocket(url, protocol, { perMessageDeflate: false, skipUTF8Validation: true });
  track(ws);
  return ws;
}
const startsWith = (buf, text) => buf.toString('latin1', 0, text.length) === text;

/** A node console-channel reader (the bare baseline speaks the same protocol); `batch` asks for batches. */
function nodeReader(tally, track, { url, token, batch = false, stall = false }) {
  return new Promise((resolve, reject) => {
    const r = newRecord(stall);
    const ws = socket(url, undefined, track);
    r.ws = ws;
    let state = 'auth';
    const t = setTimeout(() => reject(new Error(`console reader: not subscribed within 20 s (${state})`)), 20_000);
    const ready = () => {
      state = 'live';
      clearTimeout(t);
      if (stall) ws._socket.pause(); // never read again: the server must not buffer for it without bound
      resolve(r);
    };
    ws.on('open', () => ws.send(JSON.stringify({ type: 'auth', token })));
    ws.on('message', (buf) => {
      if (state === 'live') return batch ? onBatchFrame(tally, r, buf) : onLineFrame(tally, r, buf);
      tally.arrivals++;
      if (state === 'auth' && startsWith(buf, '{"type":"auth_success"')) {
        if (!batch) return ready();
        state = 'options';
        ws.send(JSON.stringify({ type: 'options', data: { batch: true } }));
      } else if (state === 'options' && startsWith(buf, '{"type":"options"')) {
        ready();
      } else if (state === 'options' && startsWith(buf, '{"type":"error"')) {
        clearTimeout(t);
        const text = buf.toString();
        reject(text.includes('UNKNOWN_TYPE') ? notAvailable(`the node channel has no batches: ${text.slice(0, 200)}`) : new Error(`options refused: ${text.slice(0, 300)}`));
      }
    });
    ws.on('close', (code) => {
      r.closed = code;
      clearTimeout(t);
      if (state !== 'live') reject(new Error(`console reader closed (${code}) before it was subscribed (${state})`));
    });
    ws.on('error', () => undefined);
  });
}

/**
 * A GraphQL subscriber speaking graphql-transport-ws with one subscription (per line or batches).
 * (The graphql-ws client library parses and validates every message; at these rates that made the
 * load generator, not the gateway, the bottleneck — this client only scans the frames.)
 */
function graphqlReader(tally, track, { url, apiToken, serverId, batch = false, stall = false }) {
  return new Promise((resolve, reject) => {
    const ws = socket(url, 'graphql-transport-ws', track);
    const r = newRecord(stall);
    r.ws = ws;
    let subscribed = false;
    let settledTimer = null;
    const t = setTimeout(() => reject(new Error('graphql reader: not subscribed within 60 s')), 60_000);
    const ready = () => {
      if (subscribed) return;
      subscribed = true;
      clearTimeout(t);
      clearTimeout(settledTimer);
      if (stall) ws._socket.pause();
      resolve(r);
    };
    ws.on('open', () => ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${apiToken}` } })));
    ws.on('message', (buf) => {
      const isNext = buf.indexOf('"type":"next"') >= 0;
      if (subscribed && isNext) return batch ? onBatchFrame(tally, r, buf) : onLineFrame(tally, r, buf);
      tally.arrivals++;
      if (isNext) return ready();
      const m = JSON.parse(buf.toString());
      if (m.type === 'connection_ack') {
        ws.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: batch ? BATCH_DOCUMENT : LINE_DOCUMENT, variables: { id: serverId } } }));
        settledTimer = setTimeout(ready, SUBSCRIBED_AFTER_MS);
      } else if (m.type === 'error' || m.type === 'complete') {
        const message = m.type === 'error' ? (m.payload?.[0]?.message ?? JSON.stringify(m.payload)) : 'complete';
        if (subscribed) {
          r.errors.push(message);
          if (r.closed === null) r.closed = m.type === 'error' ? -2 : -3;
          return;
        }
        clearTimeout(t);
        clearTimeout(settledTimer);
        reject(/Cannot query field "consoleBatches"/.test(message) ? notAvailable(`GraphQL has no consoleBatches: ${message}`) : new Error(`graphql reader refused: ${message.slice(0, 300)}`));
      }
    });
    ws.on('close', (code) => {
      if (r.closed === null) r.closed = code;
      clearTimeout(t);
      clearTimeout(settledTimer);
      if (!subscribed) reject(new Error(`graphql reader closed (${code}) before it was subscribed`));
    });
    ws.on('error', () => undefined);
  });
}

/**
 * Opens the reader a spec describes: { kind: 'node' | 'node-batch' | 'graphql' | 'graphql-batch', … };
 * `track(ws)` gets its socket as soon as it exists.
 */
function openReader(tally, spec, track) {
  const batch = spec.kind.endsWith('-batch');
  return spec.kind.startsWith('graphql') ? graphqlReader(tally, track, { ...spec, batch }) : nodeReader(tally, track, { ...spec, batch });
}

module.exports = { openReader };
