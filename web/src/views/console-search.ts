/**
 * Finding text in a console terminal (xterm's search addon): a search box with Previous and Next;
 * every match is highlighted and the current one is selected and scrolled to. Enter finds the next,
 * Shift+Enter the previous, Escape ends the search; Ctrl/Cmd+F in the terminal goes to the box.
 */
import type { Terminal } from '@xterm/xterm';
import { SearchAddon, type ISearchOptions } from '@xterm/addon-search';
import { h, id } from '../dom';

const OPTIONS: ISearchOptions = {
  caseSensitive: false,
  decorations: {
    matchBackground: '#5a4a12',
    matchOverviewRuler: '#f5c451',
    activeMatchBackground: '#b8860b',
    activeMatchBorder: '#ffd479',
    activeMatchColorOverviewRuler: '#ffd479',
  },
};

export interface SearchBar {
  el: HTMLElement;
  /** the terminal's key handler: false when the key was used here */
  onKey(e: KeyboardEvent): boolean;
  /** ends the search (the terminal was cleared) */
  reset(): void;
  dispose(): void;
}

export function searchBar(term: Terminal): SearchBar {
  const addon = new SearchAddon();
  term.loadAddon(addon);
  const inputId = id('console-search');
  const input = h('input', { type: 'search', id: inputId, className: 'console-search-input', autocomplete: 'off', spellcheck: 'false', placeholder: 'Find in the console' });
  const count = h('span', { className: 'console-search-count', 'aria-live': 'polite' });
  /** `incremental`: while typing, the current match grows with the text instead of moving on. */
  const find = (backwards: boolean, incremental = false) => {
    const text = input.value;
    if (!text) return clearSearch();
    const found = backwards ? addon.findPrevious(text, OPTIONS) : addon.findNext(text, { ...OPTIONS, incremental });
    if (!found) count.textContent = 'No match';
  };
  const clearSearch = () => {
    addon.clearDecorations();
    term.clearSelection();
    count.textContent = '';
  };
  const results = addon.onDidChangeResults(({ resultIndex, resultCount }) => {
    count.textContent = resultCount === 0 ? 'No match' : resultIndex < 0 ? `${resultCount}+ matches` : `${resultIndex + 1} of ${resultCount}`;
  });
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter') {
      e.preventDefault();
      find(e.shiftKey);
    } else if (e.key === 'Escape') {
      input.value = '';
      clearSearch();
    }
  });
  input.addEventListener('input', () => find(false, true));
  const button = (label: string, text: string, backwards: boolean) => h('button', { type: 'button', className: 'btn btn-quiet', 'aria-label': label, title: label, onclick: () => find(backwards) }, text);
  const el = h(
    'div',
    { className: 'console-search', role: 'search' },
    h('label', { for: inputId, className: 'visually-hidden' }, 'Find in the console'),
    input,
    button('Previous match', '↑', true),
    button('Next match', '↓', false),
    count,
  );
  return {
    el,
    onKey(e) {
      const isFind = e.type === 'keydown' && (e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 'f';
      if (isFind) {
        e.preventDefault();
        input.focus();
      }
      return !isFind;
    },
    reset() {
      input.value = '';
      clearSearch();
    },
    dispose: () => results.dispose(),
  };
}
