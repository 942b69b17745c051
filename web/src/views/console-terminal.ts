/**
 * A server console drawn by a real terminal (xterm.js): the colours and cursor movement servers
 * print, 10,000 lines of scrollback, search (console-search.ts) and copying of the selection.
 * Output is read-only here; commands have their own input on the page.
 *
 * Each batch of lines is one `write()`: xterm parses and draws it in one go, where a write per line
 * froze the tab under a flood. While a write is being parsed, the batches that arrive wait and go
 * together in the next write, and of what waits only the last 10,000 lines are kept (older ones
 * would scroll out of the scrollback anyway).
 *
 * Scripts and tests reach the xterm `Terminal` as the `terminal` property of the `.console-terminal` element.
 */
import '@xterm/xterm/css/xterm.css';
import { Terminal, type ITheme } from '@xterm/xterm';
import { FitAddon } from '@xterm/addon-fit';
import { announce, h } from '../dom';
import { copyText } from '../clipboard';
import type { ConsoleBatch, ConsoleLine } from '../queries';
import { searchBar } from './console-search';

export const SCROLLBACK = 10_000;

const THEME: ITheme = {
  background: '#0f1420',
  foreground: '#d7e0ee',
  cursor: '#0f1420',
  selectionBackground: '#3b5a8f',
  black: '#1b2130',
  red: '#ff6b6b',
  green: '#5fd38d',
  yellow: '#f5c451',
  blue: '#6ea8fe',
  magenta: '#d291ff',
  cyan: '#56d4dd',
  white: '#d7e0ee',
  brightBlack: '#7a8499',
  brightRed: '#ff9e97',
  brightGreen: '#8be8ae',
  brightYellow: '#ffd479',
  brightBlue: '#8fb8ff',
  brightMagenta: '#e3b8ff',
  brightCyan: '#8ae6ec',
  brightWhite: '#ffffff',
};

/** SGR colours of the lines that are not the server's standard output; each starts from the default style. */
const STREAM_STYLE: Record<string, string> = {
  stderr: '\x1b[0;91m',
  system: '\x1b[0;94m',
  install: '\x1b[0;94m',
  notice: '\x1b[0;93m',
};

export interface ConsoleTerminal {
  /** the toolbar (search, copy, clear) and the terminal */
  el: HTMLElement;
  write(batch: ConsoleBatch): void;
  /** a line of the page's own (e.g. a command that could not be sent) */
  notice(text: string): void;
  dispose(): void;
}

export function createConsoleTerminal(label: string): ConsoleTerminal {
  const term = new Terminal({
    scrollback: SCROLLBACK,
    disableStdin: true,
    cursorBlink: false,
    cursorInactiveStyle: 'none',
    fontFamily: "ui-monospace, 'DejaVu Sans Mono', Menlo, Consolas, monospace",
    fontSize: 13,
    theme: THEME,
    // the search addon's highlights are decorations, still a proposed API of xterm
    allowProposedApi: true,
  });
  const host = h('div', { className: 'console-terminal', role: 'log', 'aria-label': label });
  Object.defineProperty(host, 'terminal', { value: term });
  const output = new BatchWriter(term);
  const search = searchBar(term);
  const copy = copyControl(term);
  const clearButton = h('button', { type: 'button', className: 'btn btn-quiet', onclick: () => (output.clear(), search.reset()) }, 'Clear');
  const toolbar = h('div', { className: 'console-tools' }, search.el, h('div', { className: 'console-actions' }, copy.button, clearButton));
  term.attachCustomKeyEventHandler((e) => copy.onKey(e) && search.onKey(e));
  const stopFitting = openWhenShown(term, host);
  return {
    el: h('div', { className: 'console-output' }, toolbar, host),
    write: (batch) => output.write(batch),
    notice: (text) => output.write({ lines: [{ line: text, stream: 'notice', ts: new Date().toISOString() }], skipped: 0 }),
    dispose() {
      stopFitting();
      search.dispose();
      term.dispose();
    },
  };
}

/** Batches into writes, one at a time (see the file's comment). */
class BatchWriter {
  private waiting: string[] = [];
  private busy = false;

  constructor(private readonly term: Terminal) {
    term.write('\x1b[?25l'); // no cursor: nobody types here
  }

  write(batch: ConsoleBatch): void {
    if (batch.missed) this.waiting.push(dimLine(batch.missed, 'missed (the live connection was down or too slow)'));
    if (batch.skipped) this.waiting.push(dimLine(batch.skipped, 'skipped (output over the limit)'));
    for (const l of batch.lines) this.waiting.push(formatLine(l));
    if (this.waiting.length > SCROLLBACK) this.waiting = this.waiting.slice(-SCROLLBACK);
    if (!this.busy) this.flush();
  }

  clear(): void {
    this.waiting = [];
    this.term.clear();
  }

  private flush(): void {
    this.busy = this.waiting.length > 0;
    if (!this.busy) return;
    const text = this.waiting.join('\r\n') + '\r\n';
    this.waiting = [];
    this.term.write(text, () => this.flush());
  }
}

function formatLine(l: ConsoleLine): string {
  const style = STREAM_STYLE[l.stream];
  return style ? `${style}${l.line}\x1b[0m` : l.line;
}

/** A dim line counting lines not shown, and why. */
function dimLine(n: number, why: string): string {
  return `\x1b[0;2m… ${n.toLocaleString('en')} line${n === 1 ? '' : 's'} ${why}\x1b[0m`;
}

/** The Copy button and Ctrl/Cmd+C: the selected text goes to the clipboard. */
function copyControl(term: Terminal): { button: HTMLButtonElement; onKey(e: KeyboardEvent): boolean } {
  const copy = async () => {
    const text = term.getSelection();
    if (!text) return announce('Select text in the console first, then copy it.');
    try {
      await copyText(text);
      announce('Copied the selection.');
    } catch {
      announce('The browser did not allow copying. Press Ctrl+C (Cmd+C on a Mac) with the text selected.');
    }
  };
  const button = h('button', { type: 'button', className: 'btn btn-quiet', title: 'Copy the selected text', onclick: () => void copy() }, 'Copy');
  return {
    button,
    onKey(e) {
      const isCopy = e.type === 'keydown' && (e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 'c' && term.hasSelection();
      if (isCopy) void copy();
      return !isCopy;
    },
  };
}

/** Opens the terminal once its element is on the page, and fits it to the element's size from then on. */
function openWhenShown(term: Terminal, host: HTMLElement): () => void {
  const fit = new FitAddon();
  term.loadAddon(fit);
  let opened = false;
  const observer = new ResizeObserver(() => {
    if (!host.isConnected || host.clientWidth === 0) return;
    if (!opened) term.open(host);
    opened = true;
    fit.fit();
  });
  observer.observe(host);
  return () => observer.disconnect();
}
