/**
 * The text editor of the file browser: CodeMirror 6 with highlighting chosen from the file's
 * extension. Loaded on demand (the browser imports this module when a file is opened).
 */
import { basicSetup, EditorView } from 'codemirror';
import { javascript } from '@codemirror/lang-javascript';
import { json } from '@codemirror/lang-json';
import { yaml } from '@codemirror/lang-yaml';
import { StreamLanguage, type LanguageSupport, type StreamParser } from '@codemirror/language';
import { properties } from '@codemirror/legacy-modes/mode/properties';
import { shell } from '@codemirror/legacy-modes/mode/shell';
import { toml } from '@codemirror/legacy-modes/mode/toml';
import { xml } from '@codemirror/legacy-modes/mode/xml';
import { keymap } from '@codemirror/view';
import { EditorState, type Extension } from '@codemirror/state';

const legacy = (parser: StreamParser<unknown>): Extension => StreamLanguage.define(parser);

/** The highlighting of a file name's extension (none for unknown ones). */
function languageOf(name: string): Extension | LanguageSupport | [] {
  const ext = name.toLowerCase().split('.').pop() ?? '';
  if (ext === 'json' || ext === 'mcmeta') return json();
  if (ext === 'yml' || ext === 'yaml') return yaml();
  if (ext === 'js' || ext === 'mjs' || ext === 'cjs' || ext === 'ts') return javascript({ typescript: ext === 'ts' });
  if (ext === 'properties' || ext === 'ini' || ext === 'cfg' || ext === 'conf' || ext === 'env') return legacy(properties);
  if (ext === 'toml') return legacy(toml);
  if (ext === 'sh' || ext === 'bash') return legacy(shell);
  if (ext === 'xml' || ext === 'html') return legacy(xml);
  return [];
}

export interface Editor {
  text(): string;
  destroy(): void;
}

/** The file's line break: its first one (`\r\n` for a Windows file), `\n` for none. */
function lineBreakOf(contents: string): string {
  return /\r\n|\n/.exec(contents)?.[0] ?? '\n';
}

/**
 * An editor of `contents` in `parent`; Ctrl-S / Cmd-S calls `onSave` (when given: else read-only).
 * Lines are split at the file's line break only, and new lines get it: the text comes back byte for
 * byte, other breaks of a mixed file included (CodeMirror would otherwise split at every kind and
 * join with one).
 */
export function createEditor(parent: HTMLElement, name: string, contents: string, onSave: (() => void) | null): Editor {
  const view = new EditorView({
    doc: contents,
    parent,
    extensions: [
      basicSetup,
      EditorState.lineSeparator.of(lineBreakOf(contents)),
      languageOf(name),
      EditorView.editable.of(onSave !== null),
      EditorView.contentAttributes.of({ 'aria-label': `Contents of ${name}` }),
      keymap.of(onSave ? [{ key: 'Mod-s', preventDefault: true, run: () => (onSave(), true) }] : []),
    ],
  });
  return { text: () => view.state.sliceDoc(), destroy: () => view.destroy() };
}
