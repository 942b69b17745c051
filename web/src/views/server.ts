/**
 * One server: status, power, resources, live stats and the live console, each shown to those whose keys
 * allow it. Without `websocket.connect` there is no console, live status or live usage (and nothing is
 * subscribed to): those who may use the power buttons get an Overview of the server; the others are
 * sent on to the first tab they can use.
 */
import { ApiError, describe, gql, subscribe } from '../api';
import { isAdmin, link, navigate, type View } from '../app';
import { duration, h, mib, messageBox } from '../dom';
import { M_DELETE_SERVER, M_REINSTALL_SERVER, Q_SERVER, S_STATS, type ConsoleBatch, type Server, type ServerStatus } from '../queries';
import { powerButtons, setBadge, statusBadge, watchStatus } from './common';
import { ConsoleChannel } from './console-channel';
import { feedConsole } from './console-feed';
import type { ConsoleTerminal } from './console-terminal';
import { can, CONSOLE_KEY, landingTab, serverTabPath, serverTabs } from './server-tabs';

/** The permission key each power button needs. */
const POWER_KEY = { start: 'control.start', stop: 'control.stop', restart: 'control.restart', kill: 'control.stop' } as const;

export const serverView: View = (main, params) => {
  const serverId = params.id!;
  const msg = messageBox();
  let disposed = false;
  const cleanups: (() => void)[] = [];
  main.append(h('p', { className: 'crumbs' }, link('/', '← Servers')), h('h1', { id: 'server-title' }, 'Server'), msg.el);

  void (async () => {
    let server: Server;
    try {
      server = (await gql<{ server: Server }>(Q_SERVER, { id: serverId })).server;
    } catch (err) {
      if (disposed) return;
      const title = main.querySelector('h1')!;
      if (err instanceof ApiError && err.code === 'NOT_FOUND') {
        title.textContent = 'Server not found';
        msg.error('There is no server with this address, or it is not yours.');
      } else msg.error(`Could not load the server: ${describe(err)}`);
      return;
    }
    if (disposed) return;
    // nothing on this page is theirs to use (no console, no power buttons): on to the first tab that is
    const tab = landingTab(server.permissions);
    if (tab !== 'console') return navigate(serverTabPath(server.id, tab), { replace: true });
    build(server);
  })();

  function build(server: Server): void {
    document.title = `${server.name} · HostPanel`;
    const title = main.querySelector('h1')!;
    title.textContent = server.name;
    const badge = statusBadge(server.status);
    // the console, live status and live usage: only with websocket.connect (the panel refuses them otherwise)
    const live = can(server.permissions, CONSOLE_KEY);
    const statusLine = h('p', { className: 'status-line' }, 'Status: ', badge);
    // without the live status: the status as loaded, and a button to load it again
    if (!live) statusLine.append(' ', h('button', { type: 'button', className: 'btn btn-quiet', onclick: () => refreshStatus(server.id, (s) => (details.showStop(s), apply(s.status)), isDisposed, (m) => msg.error(m)) }, 'Refresh status'));
    title.after(serverTabs(server.id, server.permissions, 'console'), statusLine);
    const isDisposed = () => disposed;

    // the power buttons the user's keys allow (no Power card without any)
    const actions = (['start', 'stop', 'restart', 'kill'] as const).filter((a) => can(server.permissions, POWER_KEY[a]));
    const power = actions.length ? powerButtons(server.id, server.name, actions, (s) => apply(s), (m) => msg.error(m)) : null;
    const details = detailsCard(server);
    const usage = live ? usageCard(server) : null;
    const output = live ? consoleOutput(server, cleanups) : null;
    const commands = output && can(server.permissions, 'control.console') ? commandLine(server, output.notice, cleanups) : null;

    const cards: (HTMLElement | null)[] = [
      power ? h('section', { className: 'card', 'aria-labelledby': 'power-title' }, h('h2', { id: 'power-title' }, 'Power'), power.el) : null,
      usage ? h('div', { className: 'two-col' }, details.el, usage.el) : details.el,
      output
        ? h(
            'section',
            { className: 'card console', 'aria-labelledby': 'console-title' },
            h('h2', { id: 'console-title' }, 'Console'),
            output.el,
            commands ? commands.el : h('p', { className: 'hint' }, 'You can watch this console; sending commands needs the control.console permission.'),
          )
        : null,
    ];
    main.append(...cards.filter((c): c is HTMLElement => c !== null));
    if (can(server.permissions, '*')) main.append(dangerZone(server, msg, (s) => apply(s)));

    let status: ServerStatus = server.status;
    function apply(s: ServerStatus): void {
      const prev = status;
      status = s;
      setBadge(badge, s);
      power?.update(s);
      commands?.enable(s === 'running' || s === 'starting');
      if (s !== 'running' && s !== 'starting') usage?.reset();
      // refresh the stop reason and exit code
      if (prev !== s && s === 'offline') refreshStop(server.id, details.showStop, isDisposed);
    }
    apply(status);

    if (usage)
      cleanups.push(
        watchStatus(server.id, () => server.name, apply, (m) => msg.error(`Live status unavailable: ${m}`), () => showGone(main, server.name, cleanups)),
        subscribe<{ serverStats: { cpu: number; memory: number; uptime: number } }>(S_STATS, { serverId: server.id }, (d) => usage.show(d.serverStats)),
      );
  }

  return () => {
    disposed = true;
    cleanups.forEach((c) => c());
  };
};

/** The page of a server deleted while it was open (in another tab, or by someone else): its feeds end, and nothing on it works any more. */
function showGone(main: HTMLElement, name: string, cleanups: (() => void)[]): void {
  cleanups.splice(0).forEach((c) => c());
  document.title = 'Server deleted · HostPanel';
  main.replaceChildren(
    h('p', { className: 'crumbs' }, link('/', '← Servers')),
    h('h1', { id: 'server-title' }, 'Server deleted'),
    h('p', { className: 'message message-info', role: 'status' }, `${name} has been deleted, in another tab or by someone else who may delete it. Go back to your servers to pick another one or create a new one.`),
    h('p', null, link('/', 'Back to your servers', { class: 'btn btn-primary' })),
  );
}

/** Loads the server's record again (its status, without the live status); `onError` gets what went wrong. */
function refreshStatus(serverId: string, show: (s: Server) => void, disposed: () => boolean, onError: (m: string) => void): void {
  gql<{ server: Server }>(Q_SERVER, { id: serverId })
    .then((d) => !disposed() && show(d.server))
    .catch((err) => !disposed() && onError(`Could not load the status: ${describe(err)}`));
}

/** The stop reason and exit code after the server went offline (quietly: the live status goes on). */
function refreshStop(serverId: string, show: (s: Server) => void, disposed: () => boolean): void {
  refreshStatus(serverId, show, disposed, () => undefined);
}

/** Blueprint, node, resources, owner (for administrators) and how the process last ended. */
function detailsCard(server: Server): { el: HTMLElement; showStop: (s: Server) => void } {
  const stopInfo = h('dd', null);
  const details = h(
    'dl',
    { className: 'details' },
    h('dt', null, 'Blueprint'),
    h('dd', null, server.blueprint.name),
    h('dt', null, 'Node'),
    h('dd', null, server.node.name),
    h('dt', null, 'Memory'),
    h('dd', null, mib(server.memory)),
    h('dt', null, 'CPU'),
    h('dd', null, `${server.cpu}% of one core`),
    h('dt', null, 'Disk'),
    h('dd', null, mib(server.disk)),
    isAdmin() && server.owner ? [h('dt', null, 'Owner'), h('dd', null, `${server.owner.name} (${server.owner.email})`)] : null,
    h('dt', null, 'Last stop'),
    stopInfo,
  );
  const showStop = (s: Server) => {
    stopInfo.textContent = s.lastStopReason ? `${s.lastStopReason}${s.lastExitCode !== null ? ` (exit code ${s.lastExitCode})` : ''}${s.crashCount ? `, ${s.crashCount} crash${s.crashCount === 1 ? '' : 'es'}` : ''}` : '—';
  };
  showStop(server);
  return { el: h('section', { className: 'card', 'aria-labelledby': 'details-title' }, h('h2', { id: 'details-title' }, 'Details'), details), showStop };
}

/** Live CPU, memory and uptime (from the serverStats subscription). */
function usageCard(server: Server): { el: HTMLElement; show(s: { cpu: number; memory: number; uptime: number }): void; reset(): void } {
  const cpu = h('dd', null, '—');
  const memory = h('dd', null, '—');
  const up = h('dd', null, '—');
  const stats = h('dl', { className: 'stats' }, h('dt', null, 'CPU'), cpu, h('dt', null, 'Memory'), memory, h('dt', null, 'Uptime'), up);
  return {
    el: h('section', { className: 'card', 'aria-labelledby': 'stats-title' }, h('h2', { id: 'stats-title' }, 'Live usage'), stats),
    show(s) {
      cpu.textContent = `${s.cpu.toFixed(1)}%`;
      memory.textContent = `${Math.round(s.memory)} MiB of ${mib(server.memory)}`;
      up.textContent = duration(s.uptime);
    },
    reset() {
      cpu.textContent = memory.textContent = up.textContent = '—';
    },
  };
}

/**
 * The console's output: batches from the panel (console-feed.ts) drawn by a terminal
 * (console-terminal.ts, loaded with the console). Batches that arrive while it loads wait for it.
 */
function consoleOutput(server: Server, cleanups: (() => void)[]): { el: HTMLElement; notice: (text: string) => void } {
  const el = h('div', { className: 'console-panel' }, h('p', { className: 'loading' }, 'Loading the console…'));
  let term: ConsoleTerminal | null = null;
  let early: ConsoleBatch[] = [];
  const write = (batch: ConsoleBatch) => (term ? term.write(batch) : early.push(batch));
  const notice = (text: string) => write({ lines: [{ line: text, stream: 'notice', ts: new Date().toISOString() }], skipped: 0 });
  let disposed = false;
  cleanups.push(
    () => ((disposed = true), term?.dispose()),
    feedConsole(server.id, write, (err) => notice(`[panel] Live console unavailable: ${describe(err)}`)),
  );
  import('./console-terminal')
    .then(({ createConsoleTerminal }) => {
      if (disposed) return;
      term = createConsoleTerminal(`Console output of ${server.name}`);
      el.replaceChildren(term.el);
      early.forEach((b) => term!.write(b));
      early = [];
    })
    .catch(() => el.replaceChildren(h('p', { className: 'field-error' }, 'The console could not be loaded. Reload the page to try again.')));
  return { el, notice };
}

/** The command line: commands go over the node's console socket; Up and Down recall earlier ones. */
function commandLine(server: Server, notice: (text: string) => void, cleanups: (() => void)[]): { el: HTMLFormElement; enable(on: boolean): void } {
  const input = h('input', { type: 'text', id: 'console-command', name: 'command', autocomplete: 'off', spellcheck: 'false', autocapitalize: 'off', maxlength: '4096', enterkeyhint: 'send' });
  const hint = h('p', { className: 'hint', id: 'console-command-hint' });
  const button = h('button', { type: 'submit', className: 'btn btn-primary' }, 'Send');
  input.setAttribute('aria-describedby', 'console-command-hint');
  const form = h(
    'form',
    { className: 'console-form', 'aria-label': 'Send a console command' },
    h('label', { for: 'console-command' }, 'Command'),
    h('div', { className: 'console-input-row' }, h('span', { className: 'prompt', 'aria-hidden': 'true' }, '>'), input, button),
    hint,
  );
  const channel = new ConsoleChannel(server.id, (m) => notice(`[node] ${m}`));
  cleanups.push(() => channel.close());
  const history: string[] = [];
  let pos = 0;
  input.addEventListener('keydown', (e) => {
    if (e.key === 'ArrowUp' && pos > 0) {
      pos--;
      input.value = history[pos]!;
      e.preventDefault();
    } else if (e.key === 'ArrowDown' && pos < history.length) {
      pos++;
      input.value = history[pos] ?? '';
      e.preventDefault();
    }
  });
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const cmd = input.value.trim();
    if (!cmd) return;
    if (/[\r\n\0]/.test(cmd)) return notice('[panel] A command is a single line.');
    if (history[history.length - 1] !== cmd) history.push(cmd);
    pos = history.length;
    input.value = '';
    try {
      await channel.send(cmd);
    } catch (err) {
      notice(`[panel] Command not sent: ${describe(err)}`);
      input.value = cmd;
    }
  });
  return {
    el: form,
    enable(on) {
      input.disabled = !on;
      button.disabled = !on;
      hint.textContent = on ? 'Press Enter to send. Up and Down recall earlier commands.' : 'Start the server to send commands.';
    },
  };
}

/** Reinstalling and deleting the server (its owner and administrators). */
function dangerZone(server: Server, msg: ReturnType<typeof messageBox>, onStatus: (s: ServerStatus) => void): HTMLElement {
  const reinstall = h('button', {
    type: 'button',
    className: 'btn btn-danger',
    onclick: async () => {
      if (!confirm(`Reinstall ${server.name}? Its install script runs again over its files, which stay. Stop the server first.`)) return;
      reinstall.disabled = true;
      try {
        onStatus((await gql<{ reinstallServer: { status: ServerStatus } }>(M_REINSTALL_SERVER, { id: server.id })).reinstallServer.status);
      } catch (err) {
        msg.error(`Reinstall failed: ${describe(err)}`);
      } finally {
        reinstall.disabled = false;
      }
    },
  }, 'Reinstall server');
  const button = h('button', {
    type: 'button',
    className: 'btn btn-danger',
    onclick: async () => {
      if (!confirm(`Delete ${server.name}? Its process is killed and its files are removed. This cannot be undone.`)) return;
      button.disabled = true;
      try {
        await gql(M_DELETE_SERVER, { id: server.id });
        navigate('/');
      } catch (err) {
        button.disabled = false;
        msg.error(`Delete failed: ${describe(err)}`);
      }
    },
  }, 'Delete server');
  return h('section', { className: 'card danger-zone', 'aria-labelledby': 'danger-title' }, h('h2', { id: 'danger-title' }, 'Danger zone'), h('div', { className: 'actions' }, reinstall, button));
}
