/** Create a server from a blueprint: name, blueprint, node, resources (defaulted from the blueprint), variables. */
import { ApiError, describe, gql } from '../api';
import { link, navigate, type View } from '../app';
import { clear, field, h, messageBox } from '../dom';
import { M_CREATE_SERVER, Q_BLUEPRINTS, Q_MY_NODES, type Blueprint, type NodeOption, type Server } from '../queries';

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
    build(blueprints, nodes);
  })();

  function build(blueprints: Blueprint[], nodes: NodeChoice[]): void {
    const name = field('Name', h('input', { type: 'text', name: 'name', required: true, maxlength: '100', autocomplete: 'off' }));
    const description = field('Description (optional)', h('input', { type: 'text', name: 'description', maxlength: '500', autocomplete: 'off' }));
    const bpSelect = h('select', { name: 'blueprint', required: true }, blueprints.map((b) => h('option', { value: b.id }, b.name)));
    const demo = blueprints.find((b) => b.key === 'demo-game');
    if (demo) bpSelect.value = demo.id;
    const bpHint = h('p', { className: 'hint', id: 'bp-desc' });
    const blueprint = field('Blueprint', bpSelect);
    blueprint.wrap.append(bpHint);
    bpSelect.setAttribute('aria-describedby', `bp-desc ${bpSelect.getAttribute('aria-describedby') ?? ''}`.trim());

    let node: ReturnType<typeof field>;
    if (nodes.length > 0) {
      node = field('Node', h('select', { name: 'node', required: true }, nodes.map((n) => h('option', { value: n.id }, n.label))), nodes.length === 1 ? 'The only node available.' : undefined);
    } else {
      node = field(
        'Node ID',
        h('input', { type: 'text', name: 'node', required: true, autocomplete: 'off', spellcheck: 'false' }),
        'No node is registered yet: ask an administrator to add one, then enter its id here.',
      );
    }
    const num = (label: string, nameAttr: string, min: number, hint: string) =>
      field(label, h('input', { type: 'number', name: nameAttr, required: true, min: String(min), step: '1', inputmode: 'numeric' }), hint);
    const memory = num('Memory (MiB)', 'memory', 64, 'At least 64 MiB.');
    const cpu = num('CPU (% of one core)', 'cpu', 1, '100 = one full core.');
    const disk = num('Disk (MiB)', 'disk', 128, 'At least 128 MiB.');
    const vars = h('fieldset', { className: 'vars' });
    let varFields = new Map<string, ReturnType<typeof field>>();

    const applyBlueprint = () => {
      const bp = blueprints.find((b) => b.id === bpSelect.value);
      if (!bp) return;
      bpHint.textContent = bp.description;
      (memory.control as HTMLInputElement).value = String(bp.defaults.memory);
      (cpu.control as HTMLInputElement).value = String(bp.defaults.cpu);
      (disk.control as HTMLInputElement).value = String(bp.defaults.disk);
      clear(vars);
      varFields = new Map();
      if (bp.variables.length === 0) {
        vars.hidden = true;
        return;
      }
      vars.hidden = false;
      vars.append(h('legend', null, 'Settings'));
      for (const v of bp.variables) {
        const f = field(v.key, h('input', { type: 'text', name: `var-${v.key}`, value: v.default, autocomplete: 'off', spellcheck: 'false' }), v.description);
        varFields.set(v.key, f);
        vars.append(f.wrap);
      }
    };
    bpSelect.addEventListener('change', applyBlueprint);
    applyBlueprint();

    const submit = h('button', { type: 'submit', className: 'btn btn-primary' }, 'Create server');
    form.append(
      name.wrap,
      description.wrap,
      blueprint.wrap,
      node.wrap,
      h('fieldset', { className: 'resources' }, h('legend', null, 'Resources'), h('div', { className: 'grid3' }, memory.wrap, cpu.wrap, disk.wrap)),
      vars,
      h('div', { className: 'actions' }, submit, link('/', 'Cancel', { class: 'btn btn-quiet' })),
    );

    const all: Record<string, ReturnType<typeof field>> = { name, description, blueprintId: blueprint, nodeId: node, memory, cpu, disk };

    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      msg.clear();
      Object.values(all).forEach((f) => f.setError(null));
      varFields.forEach((f) => f.setError(null));
      const val = (f: ReturnType<typeof field>) => (f.control as HTMLInputElement).value.trim();
      const errors: [ReturnType<typeof field>, string][] = [];
      if (!val(name)) errors.push([name, 'Give the server a name.']);
      if (!val(node)) errors.push([node, 'Choose a node.']);
      const ints: Record<string, number> = {};
      for (const [k, f, min] of [
        ['memory', memory, 64],
        ['cpu', cpu, 1],
        ['disk', disk, 128],
      ] as const) {
        const n = Number(val(f));
        if (!Number.isInteger(n) || n < min) errors.push([f, `Enter a whole number of at least ${min}.`]);
        ints[k] = n;
      }
      if (errors.length) {
        errors.forEach(([f, m]) => f.setError(m));
        msg.error(`Please fix ${errors.length === 1 ? 'the highlighted field' : `the ${errors.length} highlighted fields`}.`);
        (errors[0]![0].control as HTMLElement).focus();
        return;
      }
      const variables: Record<string, string> = {};
      varFields.forEach((f, k) => (variables[k] = (f.control as HTMLInputElement).value));
      submit.disabled = true;
      submit.textContent = 'Creating…';
      try {
        const d = await gql<{ createServer: Server }>(M_CREATE_SERVER, {
          input: {
            name: val(name),
            description: val(description) || undefined,
            blueprintId: bpSelect.value,
            nodeId: val(node),
            memory: ints.memory,
            cpu: ints.cpu,
            disk: ints.disk,
            variables,
          },
        });
        navigate(`/servers/${d.createServer.id}`);
      } catch (err) {
        submit.disabled = false;
        submit.textContent = 'Create server';
        if (err instanceof ApiError && err.code === 'VALIDATION_ERROR') {
          let first: HTMLElement | null = null;
          for (const [k, m] of Object.entries(err.fields)) {
            const key = k.replace(/^input\./, '');
            const f = all[key] ?? varFields.get(key.replace(/^variables\./, ''));
            if (f) {
              f.setError(String(m));
              first ??= f.control;
            }
          }
          msg.error(first ? 'Please fix the highlighted fields.' : describe(err));
          first?.focus();
        } else if (err instanceof ApiError && err.code === 'CAPACITY_EXCEEDED') {
          msg.error(`The node has not enough free resources: ${err.message}`);
          (memory.control as HTMLElement).focus();
        } else msg.error(`Could not create the server: ${describe(err)}`);
      }
    });
  }

  return () => {
    disposed = true;
  };
};
