/** One server: status, power, resources, live stats and the live console. */
import { ApiError, describe, gql, subscribe } from '../api';
import { isAdmin, link, navigate, type View } from '../app';
import { clear, duration, h, mib, messageBox } from '../dom';
import { M_DELETE_SERVER, Q_SERVER, S_CONSOLE, S_STATS, type Server, type ServerStatus } from '../queries';
import { powerButtons, setBadge, statusBadge, watchStatus } from './common';
import { ConsoleChannel } from './console-channel';

const MAX_LINES = 1000;

interface Line {
  line: string;
  stream: string;
  ts: string;
  /** the node's line number (absent for the page's own notices) */
  seq?: number | null;
}

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
    build(server);
  })();

  function build(server: Server): void {
    document.title = `${server.name} · HostPanel`;
    const title = main.querySelector('h1')!;
    title.textContent = server.name;
    const badge = statusBadge(server.status);
    title.after(h('p', { className: 'status-line' }, 'Status: ', badge));

    // ---- power
    const power = powerButtons(
      server.id,
      server.name,
      ['start', 'stop', 'restart', 'kill'],
      (s) => apply(s),
      (m) => msg.error(m),
    );

    // ---- details
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
      isAdmin() ? [h('dt', null, 'Owner'), h('dd', null, `${server.owner.name} (${server.owner.email})`)] : null,
      h('dt', null, 'Last stop'),
      stopInfo,
    );
    const showStop = (s: Server) => {
      stopInfo.textContent = s.lastStopReason ? `${s.lastStopReason}${s.lastExitCode !== null ? ` (exit code ${s.lastExitCode})` : ''}${s.crashCount ? `, ${s.crashCount} crash${s.crashCount === 1 ? '' : 'es'}` : ''}` : '—';
    };
    showStop(server);

    // ---- live stats
    const statCpu = h('dd', null, '—');
    const statMem = h('dd', null, '—');
    const statUp = h('dd', null, '—');
    const stats = h('dl', { className: 'stats' }, h('dt', null, 'CPU'), statCpu, h('dt', null, 'Memory'), statMem, h('dt', null, 'Uptime'), statUp);
    const resetStats = () => {
      statCpu.textContent = '—';
      statMem.textContent = '—';
      statUp.textContent = '—';
    };

    // ---- console
    const out = h('div', {
      className: 'console-output',
      id: 'console-output',
      role: 'log',
      'aria-live': 'polite',
      'aria-relevant': 'additions',
      'aria-label': `Console output of ${server.name}`,
      tabindex: '0',
    });
    const cmdInput = h('input', { type: 'text', id: 'console-command', name: 'command', autocomplete: 'off', spellcheck: 'false', autocapitalize: 'off', maxlength: '4096', enterkeyhint: 'send' });
    const cmdHint = h('p', { className: 'hint', id: 'console-command-hint' });
    const cmdButton = h('button', { type: 'submit', className: 'btn btn-primary' }, 'Send');
    cmdInput.setAttribute('aria-describedby', 'console-command-hint');
    const cmdForm = h(
      'form',
      { className: 'console-form', 'aria-label': 'Send a console command' },
      h('label', { for: 'console-command' }, 'Command'),
      h('div', { className: 'console-input-row' }, h('span', { className: 'prompt', 'aria-hidden': 'true' }, '>'), cmdInput, cmdButton),
      cmdHint,
    );
    const clearBtn = h('button', { type: 'button', className: 'btn btn-quiet', onclick: () => (clear(out), seen.clear(), (pending = [])) }, 'Clear');

    const deleteBtn = h('button', {
      type: 'button',
      className: 'btn btn-danger',
      onclick: async () => {
        if (!confirm(`Delete ${server.name}? Its process is killed and its files are removed. This cannot be undone.`)) return;
        deleteBtn.disabled = true;
        try {
          await gql(M_DELETE_SERVER, { id: server.id });
          navigate('/');
        } catch (err) {
          deleteBtn.disabled = false;
          msg.error(`Delete failed: ${describe(err)}`);
        }
      },
    }, 'Delete server');

    main.append(
      h('section', { className: 'card', 'aria-labelledby': 'power-title' }, h('h2', { id: 'power-title' }, 'Power'), power.el),
      h(
        'div',
        { className: 'two-col' },
        h('section', { className: 'card', 'aria-labelledby': 'details-title' }, h('h2', { id: 'details-title' }, 'Details'), details),
        h('section', { className: 'card', 'aria-labelledby': 'stats-title' }, h('h2', { id: 'stats-title' }, 'Live usage'), stats),
      ),
      h(
        'section',
        { className: 'card console', 'aria-labelledby': 'console-title' },
        h('div', { className: 'console-head' }, h('h2', { id: 'console-title' }, 'Console'), clearBtn),
        out,
        cmdForm,
      ),
      h('section', { className: 'card danger-zone', 'aria-labelledby': 'danger-title' }, h('h2', { id: 'danger-title' }, 'Danger zone'), deleteBtn),
    );

    let status: ServerStatus = server.status;
    function apply(s: ServerStatus): void {
      const prev = status;
      status = s;
      setBadge(badge, s);
      power.update(s);
      const canCommand = s === 'running' || s === 'starting';
      cmdInput.disabled = !canCommand;
      cmdButton.disabled = !canCommand;
      cmdHint.textContent = canCommand ? 'Press Enter to send. Up and Down recall earlier commands.' : 'Start the server to send commands.';
      if (s !== 'running' && s !== 'starting') resetStats();
      if (prev !== s && s === 'offline') {
        // refresh the stop reason / exit code
        gql<{ server: Server }>(Q_SERVER, { id: server.id })
          .then((d) => !disposed && showStop(d.server))
          .catch(() => undefined);
      }
    }
    apply(status);

    // ---- output from the consoleOutput subscription (history first, then live)
    // Lines are drawn once per frame, all of that frame's lines in one go: one line at a time (and a
    // layout read for each) capped a tab at about a thousand lines a second, and a fast server froze it.
    const seen = new Set<string>();
    let pending: HTMLElement[] = [];
    let frame = 0;
    const flush = () => {
      frame = 0;
      const atBottom = out.scrollHeight - out.scrollTop - out.clientHeight < 40;
      out.append(...pending);
      pending = [];
      while (out.childElementCount > MAX_LINES) out.firstElementChild!.remove();
      if (seen.size > MAX_LINES * 2) {
        seen.clear();
        for (const el of out.children) seen.add((el as HTMLElement).dataset.key ?? '');
      }
      if (atBottom) out.scrollTop = out.scrollHeight;
    };
    const addLine = (l: Line) => {
      // the node numbers its lines: identical lines in one millisecond are still two lines
      const key = l.seq != null ? `${l.seq}|${l.ts}` : `${l.ts}|${l.stream}|${l.line}`;
      if (seen.has(key)) return; // history repeated after a reconnect
      seen.add(key);
      pending.push(h('div', { className: `line stream-${l.stream}`, 'data-key': key }, l.line));
      // a hidden tab gets no frames: what waits is bounded to what the view would keep anyway
      if (pending.length > MAX_LINES) pending = pending.slice(-MAX_LINES);
      if (!frame) frame = requestAnimationFrame(flush);
    };
    cleanups.push(() => frame && cancelAnimationFrame(frame));
    const notice = (text: string) => addLine({ line: text, stream: 'notice', ts: new Date().toISOString() + Math.random() });

    cleanups.push(
      subscribe<{ consoleOutput: Line }>(S_CONSOLE, { serverId: server.id }, (d) => addLine(d.consoleOutput), (err) => notice(`[panel] Live console unavailable: ${describe(err)}`)),
      watchStatus(server.id, () => server.name, apply, (m) => msg.error(`Live status unavailable: ${m}`)),
      subscribe<{ serverStats: { cpu: number; memory: number; uptime: number } }>(S_STATS, { serverId: server.id }, (d) => {
        const st = d.serverStats;
        statCpu.textContent = `${st.cpu.toFixed(1)}%`;
        statMem.textContent = `${Math.round(st.memory)} MiB of ${mib(server.memory)}`;
        statUp.textContent = duration(st.uptime);
      }),
    );

    // ---- commands over the node console socket
    const channel = new ConsoleChannel(server.id, (m) => notice(`[node] ${m}`));
    cleanups.push(() => channel.close());
    const history: string[] = [];
    let histPos = 0;
    cmdInput.addEventListener('keydown', (e) => {
      if (e.key === 'ArrowUp' && histPos > 0) {
        histPos--;
        cmdInput.value = history[histPos]!;
        e.preventDefault();
      } else if (e.key === 'ArrowDown' && histPos < history.length) {
        histPos++;
        cmdInput.value = history[histPos] ?? '';
        e.preventDefault();
      }
    });
    cmdForm.addEventListener('submit', async (e) => {
      e.preventDefault();
      const cmd = cmdInput.value.trim();
      if (!cmd) return;
      if (/[\r\n\0]/.test(cmd)) return notice('[panel] A command is a single line.');
      if (history[history.length - 1] !== cmd) history.push(cmd);
      histPos = history.length;
      cmdInput.value = '';
      try {
        await channel.send(cmd);
      } catch (err) {
        notice(`[panel] Command not sent: ${describe(err)}`);
        cmdInput.value = cmd;
      }
    });
  }

  return () => {
    disposed = true;
    cleanups.forEach((c) => c());
  };
};
