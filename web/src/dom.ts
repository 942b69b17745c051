/**
 * A tiny DOM builder: h('button', { type: 'button', onclick }, 'Start'). Text is always set as text
 * (no HTML injection), and with its direction controls shown (see visibleText).
 */
type Child = Node | string | number | null | undefined | false;
type Attrs = Record<string, unknown>;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs | null = null, ...children: (Child | Child[])[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k.startsWith('on') && typeof v === 'function') {
        el.addEventListener(k.slice(2), v as EventListener);
      } else if (k === 'className') {
        el.className = String(v);
      } else if (k === 'value' && 'value' in el) {
        (el as HTMLInputElement).value = String(v);
      } else if (k === 'checked' && 'checked' in el) {
        (el as HTMLInputElement).checked = Boolean(v);
      } else {
        el.setAttribute(k, v === true ? '' : String(v));
      }
    }
  }
  append(el, children);
  return el;
}

/**
 * Text with its bidirectional embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069) shown
 * as `⟨U+202E⟩`: a name a server's process made, `\u202Egnp.exe`, would read as "exe.png". Users
 * cannot type them into names; files on disk can hold them.
 */
export function visibleText(text: string): string {
  return text.replace(/[\u202A-\u202E\u2066-\u2069]/g, (c) => `\u27E8U+${c.charCodeAt(0).toString(16).toUpperCase()}\u27E9`);
}

function append(el: Node, children: (Child | Child[])[]): void {
  for (const c of children) {
    if (Array.isArray(c)) append(el, c);
    else if (c === null || c === undefined || c === false) continue;
    else el.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(visibleText(String(c))) : c);
  }
}

export function clear(el: Element): void {
  while (el.firstChild) el.removeChild(el.firstChild);
}

let uid = 0;
/** A unique id for label/aria wiring. */
export function id(prefix: string): string {
  return `${prefix}-${++uid}`;
}

/** A labelled form field: <div class="field"><label for>…</label><input id …><p class="hint">…</p><p class="field-error">…</p></div>. */
export function field(
  label: string,
  control: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement,
  hint?: string,
): { wrap: HTMLDivElement; control: typeof control; setError(msg: string | null): void } {
  const cid = control.id || id('f');
  control.id = cid;
  const hintEl = hint ? h('p', { className: 'hint', id: `${cid}-hint` }, hint) : null;
  const errEl = h('p', { className: 'field-error', id: `${cid}-error`, hidden: true });
  const describedBy = [hintEl ? hintEl.id : null, errEl.id].filter(Boolean).join(' ');
  control.setAttribute('aria-describedby', describedBy);
  const wrap = h('div', { className: 'field' }, h('label', { for: cid }, label), control, hintEl, errEl);
  return {
    wrap,
    control,
    setError(msg) {
      errEl.textContent = msg ?? '';
      errEl.hidden = !msg;
      if (msg) control.setAttribute('aria-invalid', 'true');
      else control.removeAttribute('aria-invalid');
    },
  };
}

/** A message box; role=alert for errors (announced at once), role=status otherwise. */
export function messageBox(): { el: HTMLDivElement; error(msg: string): void; info(msg: string): void; clear(): void } {
  const el = h('div', { className: 'message', hidden: true });
  const show = (kind: 'error' | 'info', msg: string) => {
    el.className = `message message-${kind}`;
    el.setAttribute('role', kind === 'error' ? 'alert' : 'status');
    el.textContent = msg;
    el.hidden = false;
  };
  return {
    el,
    error: (m) => show('error', m),
    info: (m) => show('info', m),
    clear: () => {
      el.hidden = true;
      el.textContent = '';
    },
  };
}

/** Announces a short text to screen readers through the page's polite live region. */
export function announce(text: string): void {
  const region = document.getElementById('live-status');
  if (!region) return;
  region.textContent = '';
  // a fresh text node after a tick so that repeated identical messages are announced too
  setTimeout(() => (region.textContent = text), 30);
}

export function mib(n: number | null | undefined): string {
  if (n === null || n === undefined) return '—';
  return n >= 1024 ? `${(n / 1024).toFixed(n % 1024 === 0 ? 0 : 1)} GiB` : `${n} MiB`;
}

export function duration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '—';
  const s = Math.floor(seconds);
  const d = Math.floor(s / 86400);
  const hh = Math.floor((s % 86400) / 3600);
  const mm = Math.floor((s % 3600) / 60);
  const ss = s % 60;
  if (d) return `${d}d ${hh}h`;
  if (hh) return `${hh}h ${mm}m`;
  if (mm) return `${mm}m ${ss}s`;
  return `${ss}s`;
}

/** Previous and next page (nothing for a single page). */
export function pagerButtons(page: number, pages: number, go: (page: number) => void): HTMLElement[] {
  if (pages <= 1) return [];
  return [
    h('button', { type: 'button', className: 'btn', disabled: page <= 1, onclick: () => go(page - 1) }, 'Previous page'),
    h('span', { className: 'muted' }, `Page ${page} of ${pages}`),
    h('button', { type: 'button', className: 'btn', disabled: page >= pages, onclick: () => go(page + 1) }, 'Next page'),
  ];
}
