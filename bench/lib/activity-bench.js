'use strict';
/**
 * What the activity log costs: the REST server list (as a user, so the subuser visibility rule runs)
 * and a power action (a no-op `start` of a running server: one signed call to the agent, and one
 * activity entry), each with recording on and off in alternating rounds of the same run. Recording
 * is switched through the bench panel's IPC (`activity` message), never by a production setting.
 */
const { ask } = require('./util');
const { measure } = require('./http-bench');

async function setRecording(panelChild, enabled) {
  await ask(panelChild, { type: 'activity', enabled }, 10_000);
}

async function runActivityScenario({ panelChild, panelUrl, panelPid, userToken, serverId, seconds, warmupSeconds, quietWaitMs, rounds = 3, log }) {
  const timing = { seconds, warmupSeconds, quietWaitMs, pid: panelPid };
  const auth = { authorization: `Bearer ${userToken}` };
  const targets = {
    list: { url: `${panelUrl}/api/v1/servers?limit=20`, headers: auth },
    power: { url: `${panelUrl}/api/v1/servers/${serverId}/start`, method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{}' },
  };
  const runs = { list: { on: [], off: [] }, power: { on: [], off: [] } };
  for (let round = 0; round < rounds; round++) {
    // the order turns each round, so that drift of the machine's speed does not favour one side
    const order = round % 2 === 0 ? ['on', 'off'] : ['off', 'on'];
    for (const [key, opts] of Object.entries(targets)) {
      for (const mode of order) {
        await setRecording(panelChild, mode === 'on');
        log(`  activity, round ${round + 1}/${rounds}: ${key} with recording ${mode}`);
        runs[key][mode].push(await measure(`${key} (recording ${mode})`, { ...opts, connections: key === 'power' ? 16 : 64 }, timing, log));
      }
    }
  }
  await setRecording(panelChild, true);
  // the cost of a request is the CPU the panel and PostgreSQL spend on it; each comparison reports the
  // round whose CPU ratio is the median one
  const cpu = (x) => (x.serverCpuMsPerRequest ?? 0) + (x.databaseCpuMsPerRequest ?? 0);
  const round3 = (x) => Math.round(x * 1000) / 1000;
  const summary = {};
  for (const key of Object.keys(targets)) {
    const { on, off } = runs[key];
    const cpuRatios = on.map((x, j) => cpu(x) / Math.max(0.001, cpu(off[j])));
    const i = cpuRatios.indexOf([...cpuRatios].sort((a, b) => a - b)[Math.floor(cpuRatios.length / 2)]);
    summary[key] = {
      on: on[i],
      off: off[i],
      cpuOn: round3(cpu(on[i])),
      cpuOff: round3(cpu(off[i])),
      cpuRatio: round3(cpuRatios[i]),
      ratio: round3(on[i].requestsPerSec / Math.max(1, off[i].requestsPerSec)),
      cpuRatiosByRound: cpuRatios.map(round3),
    };
    log(`  activity: ${key} costs ${summary[key].cpuOn} ms of CPU per request with recording, ${summary[key].cpuOff} ms without (${summary[key].cpuRatio}x; target ≤ 1.05x)`);
  }
  return summary;
}

module.exports = { runActivityScenario };
