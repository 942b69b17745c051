/**
 * Administration → a node's card → Edit: its name, agent address, and capacity. Only the fields that
 * changed are sent (`updateNode`). Refused fields (VALIDATION_ERROR, ALREADY_EXISTS, INVALID_STATE of
 * memory or disk below what the servers have allocated, or of the node the panel runs keeping its
 * name and address) show next to their field, and the panel's message in the form's message box.
 */
import { ApiError, gql } from '../api';
import { field, h, messageBox } from '../dom';
import { M_UPDATE_NODE, type NodeInfo } from '../queries';
import { showRefusal, type ErrorTarget } from './field-errors';

type Field = ReturnType<typeof field>;
type Editable = 'name' | 'fqdn' | 'port' | 'scheme' | 'memory' | 'disk' | 'cpuCores';

const text = (f: Field) => (f.control as HTMLInputElement).value.trim();
/** A number field's value: blank is null (the panel says what a blank means for each). */
const num = (f: Field) => (text(f) === '' ? null : Number(text(f)));

function nodeFields(n: NodeInfo): Record<Editable, Field> {
  const fid = (k: string) => `node-${n.id}-${k}`;
  const input = (k: string, value: string | number | null, extra: Record<string, unknown> = {}) => h('input', { id: fid(k), value: value ?? '', autocomplete: 'off', ...extra });
  const number = (k: string, value: number | null, min: number) => input(k, value, { type: 'number', min: String(min), step: '1', inputmode: 'numeric' });
  const allocated = (k: 'memory' | 'disk') => (n.allocated ? `Its servers have ${n.allocated[k]} MiB allocated: not below that.` : undefined);
  return {
    name: field('Name', input('name', n.name, { type: 'text', required: true }), 'Another node cannot have it.'),
    fqdn: field('Address', input('fqdn', n.fqdn, { type: 'text', spellcheck: 'false', required: true }), 'Hostname or IP address of the node agent.'),
    port: field('Port', number('port', n.port, 1)),
    scheme: field('Scheme', h('select', { id: fid('scheme') }, ...['http', 'https'].map((s) => h('option', { value: s, selected: n.scheme === s }, s)))),
    memory: field('Memory (MiB)', number('memory', n.memory, 64), allocated('memory')),
    disk: field('Disk (MiB)', number('disk', n.disk, 128), allocated('disk')),
    cpuCores: field('CPU cores', number('cpuCores', n.cpuCores, 1), 'Blank: the number the node agent reports.'),
  };
}

/** The fields whose value differs from the node's, as `updateNode` takes them. */
function changes(n: NodeInfo, fields: Record<Editable, Field>): Partial<Record<Editable, unknown>> {
  const now: Record<Editable, unknown> = {
    name: text(fields.name),
    fqdn: text(fields.fqdn),
    port: num(fields.port),
    scheme: (fields.scheme.control as HTMLSelectElement).value,
    memory: num(fields.memory),
    disk: num(fields.disk),
    cpuCores: num(fields.cpuCores),
  };
  return Object.fromEntries(Object.entries(now).filter(([k, v]) => v !== n[k as Editable]));
}

/** The form of node `n`: `saved` gets the node as the panel saved it, `cancel` closes the form unsaved. */
export function nodeForm(n: NodeInfo, on: { saved(node: NodeInfo): void; cancel(): void }): HTMLFormElement {
  const msg = messageBox();
  const fields = nodeFields(n);
  const titleId = `node-${n.id}-form-title`;
  const save = h('button', { type: 'submit', className: 'btn btn-primary' }, 'Save');
  const cancel = h('button', { type: 'button', className: 'btn', onclick: () => on.cancel() }, 'Cancel');
  const form = h(
    'form',
    { className: 'form node-form', novalidate: true, 'aria-labelledby': titleId },
    h('h4', { id: titleId }, `Edit ${n.name}`),
    msg.el,
    h('div', { className: 'node-form-fields' }, Object.values(fields).map((f) => f.wrap)),
    h('div', { className: 'actions' }, save, cancel),
  );
  const target = (name: string): ErrorTarget | null => (Object.hasOwn(fields, name) ? fields[name as Editable] : null);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    msg.clear();
    Object.values(fields).forEach((f) => f.setError(null));
    const input = changes(n, fields);
    if (!Object.keys(input).length) return msg.info('Nothing to save: no field has changed.');
    save.disabled = true;
    try {
      const d = await gql<{ updateNode: NodeInfo }>(M_UPDATE_NODE, { id: n.id, input });
      on.saved(d.updateNode);
    } catch (err) {
      const what = `Could not save ${n.name}`;
      showRefusal(err, target, msg, what);
      // the panel's message says why the fields cannot be what they were set to
      if (err instanceof ApiError && err.code === 'INVALID_STATE') msg.error(`${what}: ${err.message}`);
    } finally {
      save.disabled = false;
    }
  });
  return form;
}
