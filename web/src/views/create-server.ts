/** Create a server from a blueprint: name, blueprint, node, resources (defaulted from the blueprint), variables. */
import { ApiError, describe, gql } from '../api';
import { link, navigate, type View } from '../app';
import { clear, field, h, messageBox } from '../dom';
import { M_CREATE_SERVER, Q_BLUEPRINTS, Q_MY_NODES, type Blueprint, type NodeOption, type Server } from '../queries';

type Field = ReturnType<typeof field>;

interface NodeChoice {
  id: string;
  label: string;
}

/** Nodes the user may place a server on (GraphQL `myNodes`, REST GET /users/me/nodes), with free memory/disk. */
async function nodeChoices(): Promise<NodeChoice[]> {
  const d = await gql<{ myNodes: { items: NodeOption[] } }>(Q_MY_NODES);
  return d.myNodes.items.map((n) => ({
    id: n.id,
    label: `${n.name} — ${n.status}, ${n.available.memory} MiB RAM and ${n.available.disk} MiB disk free`,
  }));
}

const value = (f: Field): string => (f.control as HTMLInputElement).value.trim();

/** A list of the nodes, or a free-text id when none is listed. */
function nodeField(nodes: NodeChoice[]): Field {
  if (nodes.length > 0) {
    return field('Node', h('select', { name: 'node', required: true }, nodes.map((n) => h('option', { value: n.id }, n.label))), nodes.length === 1 ? 'The only node available.' : undefined);
  }
  return field(
    'Node ID',
    h('input', { type: 'text', name: 'node', required: true, autocomplete: 'off', spellcheck: 'false' }),
    'No node is registered yet: ask an administrator to add one, then enter its id here.',
  );
}

/** The blueprint picker; picking one fills in its resources and its settings (`apply`). */
function blueprintField(blueprints: Blueprint[]): { field: Field; select: HTMLSelectElement; hint: HTMLElement } {
  const select = h('select', { name: 'blueprint', required: true }, blueprints.map((b) => h('option', { value: b.id }, b.name)));
  const demo = blueprints.find((b) => b.key === 'demo-game');
  if (demo) select.value = demo.id;
  const hint = h('p', { className: 'hint', id: 'bp-desc' });
  const f = field('Blueprint', select);
  f.wrap.append(hint);
  select.setAttribute('aria-describedby', `bp-desc ${select.getAttribute('aria-describedby') ?? ''}`.trim());
  return { field: f, select, hint };
}

const RESOURCES = [
  ['memory', 'Memory (MiB)', 64, 'At least 64 MiB.'],
  ['cpu', 'CPU (% of one core)', 1, '100 = one full core.'],
  ['disk', 'Disk (MiB)', 128, 'At least 128 MiB.'],
] as const;
type Resource = (typeof RESOURCES)[number][0];

function resourceFields(): Record<Resource, Field> {
  const num = (label: string, nameAttr: string, min: number, hint: string) =>
    field(label, h('input', { type: 'number', name: nameAttr, required: true, min: String(min), step: '1', inputmode: 'numeric' }), hint);
  return Object.fromEntries(RESOURCES.map(([key, label, min, hint]) => [key, num(label, key, min, hint)])) as Record<Resource, Field>;
}

/** The blueprint's settings, one field each (hidden when it has none). */
function fillVariables(vars: HTMLFieldSetElement, bp: Blueprint): Map<string, Field> {
  clear(vars);
  const fields = new Map<string, Field>();
  vars.hidden = bp.variables.length === 0;
  if (vars.hidden) return fields;
  vars.append(h('legend', null, 'Settings'));
  for (const v of bp.variables) {
    const f = field(v.key, h('input', { type: 'text', name: `var-${v.key}`, value: v.default, autocomplete: 'off', spellcheck: 'false' }), v.description);
    fields.set(v.key, f);
    vars.append(f.wrap);
  }
  return fields;
}

interface CreateForm {
  name: Field;
  description: Field;
  blueprint: ReturnType<typeof blueprintField>;
  node: Field;
  resources: Record<Resource, Field>;
  variables: Map<string, Field>;
}

/** The fields by the names the API reports errors under. */
const byApiName = (f: CreateForm): Record<string, Field> => ({ name: f.name, description: f.description, blueprintId: f.blueprint.field, nodeId: f.node, ...f.resources });

/** What the page can tell before asking the panel: [field, message] for each problem. */
function checkForm(f: CreateForm): [Field, string][] {
  const errors: [Field, string][] = [];
  if (!value(f.name)) errors.push([f.name, 'Give the server a name.']);
  if (!value(f.node)) errors.push([f.node, 'Choose a node.']);
  for (const [key, , min] of RESOURCES) {
    const n = Number(value(f.resources[key]));
    if (!Number.isInteger(n) || n < min) errors.push([f.resources[key], `Enter a whole number of at least ${min}.`]);
  }
  return errors;
}

function inputOf(f: CreateForm): Record<string, unknown> {
  const variables: Record<string, string> = {};
  f.variables.forEach((v, k) => (variables[k] = (v.control as HTMLInputElement).value));
  const int = (key: Resource) => Number(value(f.resources[key]));
  return { name: value(f.name), description: value(f.description) || undefined, blueprintId: f.blueprint.select.value, nodeId: value(f.node), memory: int('memory'), cpu: int('cpu'), disk: int('disk'), variables };
}

/** Puts the panel's refusal next to the fields it names. */
function showRefusal(f: CreateForm, err: unknown, msg: ReturnType<typeof messageBox>): void {
  if (err instanceof ApiError && err.code === 'VALIDATION_ERROR') {
    const fields = byApiName(f);
    let first: HTMLElement | null = null;
    for (const [k, m] of Object.entries(err.fields)) {
      const key = k.replace(/^input\./, '');
      const target = fields[key] ?? f.variables.get(key.replace(/^variables\./, ''));
      if (!target) continue;
      target.setError(String(m));
      first ??= target.control;
    }
    msg.error(first ? 'Please fix the highlighted fields.' : describe(err));
    first?.focus();
  } else if (err instanceof ApiError && err.code === 'CAPACITY_EXCEEDED') {
    msg.error(`The node has not enough free resources: ${err.message}`);
    (f.resources.memory.control as HTMLElement).focus();
  } else msg.error(`Could not create the server: ${describe(err)}`);
}

async function submitForm(f: CreateForm, submit: HTMLButtonElement, msg: ReturnType<typeof messageBox>): Promise<void> {
  msg.clear();
  Object.values(byApiName(f)).forEach((x) => x.setError(null));
  f.variables.forEach((x) => x.setError(null));
  const errors = checkForm(f);
  if (errors.length) {
    errors.forEach(([x, m]) => x.setError(m));
    msg.error(`Please fix ${errors.length === 1 ? 'the highlighted field' : `the ${errors.length} highlighted fields`}.`);
    (errors[0]![0].control as HTMLElement).focus();
    return;
  }
  submit.disabled = true;
  submit.textContent = 'Creating…';
  try {
    const d = await gql<{ createServer: Server }>(M_CREATE_SERVER, { input: inputOf(f) });
    navigate(`/servers/${d.createServer.id}`);
  } catch (err) {
    submit.disabled = false;
    submit.textContent = 'Create server';
    showRefusal(f, err, msg);
  }
}

function buildForm(form: HTMLFormElement, blueprints: Blueprint[], nodes: NodeChoice[], msg: ReturnType<typeof messageBox>): void {
  const vars = h('fieldset', { className: 'vars' });
  const f: CreateForm = {
    name: field('Name', h('input', { type: 'text', name: 'name', required: true, maxlength: '100', autocomplete: 'off' })),
    description: field('Description (optional)', h('input', { type: 'text', name: 'description', maxlength: '500', autocomplete: 'off' })),
    blueprint: blueprintField(blueprints),
    node: nodeField(nodes),
    resources: resourceFields(),
    variables: new Map(),
  };
  const applyBlueprint = () => {
    const bp = blueprints.find((b) => b.id === f.blueprint.select.value);
    if (!bp) return;
    f.blueprint.hint.textContent = bp.description;
    for (const [key] of RESOURCES) (f.resources[key].control as HTMLInputElement).value = String(bp.defaults[key]);
    f.variables = fillVariables(vars, bp);
  };
  f.blueprint.select.addEventListener('change', applyBlueprint);
  applyBlueprint();
  const submit = h('button', { type: 'submit', className: 'btn btn-primary' }, 'Create server');
  const { memory, cpu, disk } = f.resources;
  form.append(
    f.name.wrap,
    f.description.wrap,
    f.blueprint.field.wrap,
    f.node.wrap,
    h('fieldset', { className: 'resources' }, h('legend', null, 'Resources'), h('div', { className: 'grid3' }, memory.wrap, cpu.wrap, disk.wrap)),
    vars,
    h('div', { className: 'actions' }, submit, link('/', 'Cancel', { class: 'btn btn-quiet' })),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void submitForm(f, submit, msg);
  });
}

export const createServerView: View = (main) => {
  const msg = messageBox();
  const form = h('form', { className: 'card form', novalidate: true, 'aria-labelledby': 'create-title' });
  main.append(h('p', { className: 'crumbs' }, link('/', '← Servers')), h('h1', { id: 'create-title' }, 'New server'), msg.el, form);
  form.append(h('p', { className: 'muted' }, 'Loading blueprints and nodes…'));
  let disposed = false;

  void (async () => {
    let blueprints: Blueprint[];
    let nodes: NodeChoice[];
    try {
      [blueprints, nodes] = await Promise.all([gql<{ blueprints: { items: Blueprint[] } }>(Q_BLUEPRINTS).then((d) => d.blueprints.items), nodeChoices()]);
    } catch (err) {
      clear(form);
      msg.error(`Could not load the form: ${describe(err)}`);
      return;
    }
    if (disposed) return;
    clear(form);
    buildForm(form, blueprints, nodes, msg);
  })();

  return () => {
    disposed = true;
  };
};
