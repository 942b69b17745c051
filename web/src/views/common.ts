/** Pieces shared by the server views: status badge, power buttons, live status subscription. */
import { ApiError, describe, gql, subscribe } from '../api';
import { announce, h } from '../dom';
import { M_POWER, Q_SERVER_EXISTS, S_STATUS, STATUS_LABEL, type PowerAction, type ServerStatus } from '../queries';

export function statusBadge(status: ServerStatus): HTMLSpanElement {
  const el = h('span', { className: 'status' });
  setBadge(el, status);
  return el;
}

export function setBadge(el: HTMLElement, status: ServerStatus): void {
  el.className = `status status-${status}`;
  el.dataset.status = status;
  el.textContent = STATUS_LABEL[status] ?? status;
}

/** Which power actions make sense in a status (the API accepts no-ops too, but the buttons say what will happen). */
export function allowed(action: PowerAction, status: ServerStatus): boolean {
  switch (action) {
    case 'start':
      return status === 'offline';
    case 'stop':
      return status === 'starting' || status === 'running';
    case 'restart':
      return status === 'offline' || status === 'starting' || status === 'running';
    case 'kill':
      return status === 'starting' || status === 'running' || status === 'stopping';
  }
}

const ACTION_LABEL: Record<PowerAction, string> = { start: 'Start', stop: 'Stop', restart: 'Restart', kill: 'Kill' };

/**
 * Start/Stop/Restart/Kill buttons for one server. `update(status)` enables the right ones.
 * `onResult` gets the status the API answered with; `onError` the message of a failure.
 */
export function powerButtons(
  serverId: string,
  serverName: string,
  actions: PowerAction[],
  onResult: (status: ServerStatus) => void,
  onError: (message: string) => void,
): { el: HTMLDivElement; update(status: ServerStatus): void } {
  let current: ServerStatus = 'offline';
  let busy = false;
  const buttons = new Map<PowerAction, HTMLButtonElement>();
  const el = h('div', { className: 'power', role: 'group', 'aria-label': `Power: ${serverName}` });
  for (const a of actions) {
    const b = h(
      'button',
      {
        type: 'button',
        className: `btn btn-${a}`,
        'data-action': a,
        'aria-label': `${ACTION_LABEL[a]} ${serverName}`,
        onclick: async () => {
          if (a === 'kill' && !confirm(`Kill ${serverName}? The process is ended at once, without saving.`)) return;
          busy = true;
          refresh();
          try {
            const d = await gql<{ result: { status: ServerStatus } }>(M_POWER[a], { id: serverId });
            onResult(d.result.status);
          } catch (err) {
            onError(`${ACTION_LABEL[a]} failed: ${describe(err)}`);
          } finally {
            busy = false;
            refresh();
          }
        },
      },
      ACTION_LABEL[a],
    );
    b.title = `${ACTION_LABEL[a]} ${serverName}`;
    buttons.set(a, b);
    el.append(b);
  }
  const refresh = () => {
    for (const [a, b] of buttons) {
      const enable = !busy && allowed(a, current);
      // keep focus on a button that becomes unavailable: aria-disabled instead of disabled while focused
      if (document.activeElement === b) {
        b.disabled = false;
        b.setAttribute('aria-disabled', String(!enable));
      } else {
        b.removeAttribute('aria-disabled');
        b.disabled = !enable;
      }
    }
  };
  // a click on an aria-disabled button does nothing
  el.addEventListener(
    'click',
    (e) => {
      const b = (e.target as Element).closest('button');
      if (b?.getAttribute('aria-disabled') === 'true') e.stopImmediatePropagation();
    },
    true,
  );
  el.addEventListener('focusout', () => setTimeout(refresh, 0));
  return {
    el,
    update(status) {
      current = status;
      refresh();
    },
  };
}

/**
 * Live status of one server; announces changes. `onGone` runs when the server has been deleted (in
 * another tab, by a co-owner or an administrator): the panel then ends the subscription, and the
 * server is looked up once to tell a deletion from any other end. Returns the unsubscribe function.
 */
export function watchStatus(serverId: string, name: () => string, onStatus: (s: ServerStatus) => void, onError?: (msg: string) => void, onGone?: () => void): () => void {
  let last: ServerStatus | null = null;
  let stopped = false;
  const ended = () => {
    if (!onGone) return;
    gql(Q_SERVER_EXISTS, { id: serverId }).catch((err: unknown) => {
      if (!stopped && err instanceof ApiError && err.code === 'NOT_FOUND') {
        announce(`${name()} has been deleted.`);
        onGone();
      }
    });
  };
  const stop = subscribe<{ serverStatus: { status: ServerStatus } }>(
    S_STATUS,
    { serverId },
    (d) => {
      const s = d.serverStatus.status;
      if (last !== null && s !== last) announce(`${name()} is now ${STATUS_LABEL[s].toLowerCase()}.`);
      last = s;
      onStatus(s);
    },
    (err) => onError?.(describe(err)),
    undefined,
    ended,
  );
  return () => {
    stopped = true;
    stop();
  };
}
