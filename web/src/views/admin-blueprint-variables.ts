/**
 * The variables of a blueprint as an editable table: one row a variable (key, name, default, rules,
 * user viewable, user editable), rows added and removed; each cell shows its own refusal
 * (`variables.<i>.<field>` of `details.fields`). A variable's description is kept as it is.
 */
import { h, id } from '../dom';
import type { BlueprintVariable } from '../queries';
import type { ErrorTarget } from './field-errors';

type TextProp = 'key' | 'name' | 'default' | 'rules';
type FlagProp = 'userViewable' | 'userEditable';
const TEXT_LABEL: Record<TextProp, string> = { key: 'key', name: 'name', default: 'default', rules: 'rules' };
const FLAG_LABEL: Record<FlagProp, string> = { userViewable: 'users see it', userEditable: 'users change it' };

interface Row {
  el: HTMLTableRowElement;
  description: string;
  text: Record<TextProp, HTMLInputElement>;
  flag: Record<FlagProp, HTMLInputElement>;
  cells: Map<string, ErrorTarget>;
}

/** A control with its error line below it; the control's label names the variable by its key. */
function cell(control: HTMLInputElement): { td: HTMLTableCellElement; target: ErrorTarget } {
  control.id ||= id('var');
  const err = h('p', { className: 'field-error', id: `${control.id}-error`, hidden: true });
  control.setAttribute('aria-describedby', err.id);
  const target: ErrorTarget = {
    control,
    setError(msg) {
      err.textContent = msg ?? '';
      err.hidden = !msg;
      if (msg) control.setAttribute('aria-invalid', 'true');
      else control.removeAttribute('aria-invalid');
    },
  };
  return { td: h('td', null, control, err), target };
}

export function variablesTable(initial: BlueprintVariable[], readOnly: boolean) {
  const rows: Row[] = [];
  const body = h('tbody', null);
  const empty = h('p', { className: 'muted' }, 'No variables: the startup command uses none.');

  function relabel(r: Row, n: number): void {
    const who = r.text.key.value.trim() || `new variable ${n}`;
    for (const p of Object.keys(TEXT_LABEL) as TextProp[]) r.text[p].setAttribute('aria-label', `${who} ${TEXT_LABEL[p]}`);
    for (const p of Object.keys(FLAG_LABEL) as FlagProp[]) r.flag[p].setAttribute('aria-label', `${who}: ${FLAG_LABEL[p]}`);
  }

  function refresh(): void {
    rows.forEach((r, i) => relabel(r, i + 1));
    empty.hidden = rows.length > 0;
  }

  function add(v: BlueprintVariable): void {
    const text = {} as Row['text'];
    const flag = {} as Row['flag'];
    const cells = new Map<string, ErrorTarget>();
    const tds: HTMLTableCellElement[] = [];
    for (const p of Object.keys(TEXT_LABEL) as TextProp[]) {
      text[p] = h('input', { type: 'text', value: v[p], autocomplete: 'off', spellcheck: 'false', readonly: readOnly, 'data-prop': p });
      const c = cell(text[p]);
      cells.set(p, c.target);
      tds.push(c.td);
    }
    for (const p of Object.keys(FLAG_LABEL) as FlagProp[]) {
      flag[p] = h('input', { type: 'checkbox', checked: v[p], disabled: readOnly, 'data-prop': p });
      const c = cell(flag[p]);
      cells.set(p, c.target);
      tds.push(c.td);
    }
    const el = h('tr', { 'data-variable': v.key }, tds);
    const r: Row = { el, description: v.description, text, flag, cells };
    if (!readOnly) {
      const remove = h('button', { type: 'button', className: 'btn btn-quiet' }, 'Remove');
      remove.addEventListener('click', () => {
        rows.splice(rows.indexOf(r), 1);
        el.remove();
        refresh();
      });
      text.key.addEventListener('input', () => relabel(r, rows.indexOf(r) + 1));
      el.append(h('td', null, remove));
      remove.setAttribute('aria-label', `Remove ${v.key || 'this variable'}`);
    }
    rows.push(r);
    body.append(el);
    refresh();
  }

  initial.forEach(add);
  const addBtn = h('button', { type: 'button', className: 'btn', onclick: () => add({ key: '', name: '', description: '', default: '', rules: '', userViewable: true, userEditable: true }) }, 'Add a variable');
  const head = ['Key', 'Name', 'Default', 'Rules', 'Users see it', 'Users change it'].map((t) => h('th', { scope: 'col' }, t));
  if (!readOnly) head.push(h('th', { scope: 'col' }, h('span', { className: 'visually-hidden' }, 'Remove')));
  const el = h(
    'fieldset',
    { className: 'variables' },
    h('legend', null, 'Variables'),
    h('p', { className: 'hint' }, 'Used in the startup command as {{KEY}}. Rules are |-separated, e.g. required|integer|between:1,100.'),
    h('div', { className: 'table-scroll' }, h('table', { className: 'activity variables-table' }, h('thead', null, h('tr', null, head)), body)),
    empty,
    readOnly ? null : addBtn,
  );
  refresh();

  return {
    el,
    /** The list as the API takes it (it replaces the whole list); an empty name is the key. */
    value: () => rows.map((r) => ({ key: r.text.key.value.trim(), name: r.text.name.value.trim() || undefined, description: r.description, default: r.text.default.value, rules: r.text.rules.value, userViewable: r.flag.userViewable.checked, userEditable: r.flag.userEditable.checked })),
    /** The cell of `variables.<i>.<prop>`. */
    target(i: number, prop: string): ErrorTarget | null {
      return rows[i]?.cells.get(prop) ?? null;
    },
    clearErrors: () => rows.forEach((r) => r.cells.forEach((c) => c.setError(null))),
  };
}
