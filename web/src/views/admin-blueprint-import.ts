/**
 * The egg import of the Blueprints screen: a Pterodactyl or Pelican egg in JSON or YAML, pasted or
 * read from a file (FileReader, nothing uploaded before "Import egg"). Text that starts with `{` is
 * JSON (checked here); anything else goes to the panel as YAML, which says where it does not parse.
 * Then the new blueprint and what of the egg it does not do (the import's warnings), or the egg's
 * refused fields.
 */
import { ApiError, describe, gql } from '../api';
import { link } from '../app';
import { announce, clear, field, h, messageBox } from '../dom';
import { M_IMPORT_BLUEPRINT, M_IMPORT_BLUEPRINT_YAML, type ImportWarning } from '../queries';

interface Imported {
  blueprint: { id: string; key: string; name: string; variables: { key: string }[] };
  warnings: ImportWarning[];
}

/** The pasted text as a JSON object, as YAML text for the panel, or the sentence saying what is wrong with it. */
function parseEgg(text: string): { egg: Record<string, unknown> } | { yaml: string } | { problem: string } {
  if (!text.trim()) return { problem: 'Paste the egg or choose its file first.' };
  if (!text.trimStart().startsWith('{')) return { yaml: text };
  let egg: unknown;
  try {
    egg = JSON.parse(text);
  } catch (err) {
    return { problem: `This is not valid JSON (${(err as Error).message}). Paste the whole egg file, from its first { to its last }.` };
  }
  if (!egg || typeof egg !== 'object' || Array.isArray(egg)) return { problem: 'An egg is a JSON object ({ … }): paste the whole egg file.' };
  return { egg: egg as Record<string, unknown> };
}

/** The created blueprint and the import's warnings. */
function importedReport(r: Imported): HTMLElement[] {
  const b = r.blueprint;
  const out: HTMLElement[] = [h('p', null, 'Imported ', link(`/admin/blueprints/${b.id}`, b.name), ` as `, h('code', null, b.key), ` with ${b.variables.length} variable${b.variables.length === 1 ? '' : 's'}. Open it to check its values before servers use it.`)];
  if (!r.warnings.length) out.push(h('p', null, 'Everything of the egg was mapped.'));
  else
    out.push(
      h('h3', { id: 'import-warnings-title' }, `Not mapped from the egg (${r.warnings.length})`),
      h('ul', { className: 'import-warnings', 'aria-labelledby': 'import-warnings-title' }, r.warnings.map((w) => h('li', { 'data-field': w.field }, h('code', null, w.field), ': ', w.message))),
    );
  return out;
}

/** The egg's refused fields (`details.fields`, named as in the egg, e.g. `variables.0.env_variable`). */
function refusalReport(err: ApiError): HTMLElement[] {
  const fields = Object.entries(err.fields);
  return [
    h('p', null, `The egg was not imported: ${err.message} Correct these fields of the egg and import it again.`),
    h('ul', { className: 'import-errors' }, fields.map(([name, message]) => h('li', { 'data-field': name }, h('code', null, name), ': ', String(message)))),
  ];
}

export function importSection(pageMsg: ReturnType<typeof messageBox>, onImported: () => void): HTMLElement {
  const msg = messageBox();
  const result = h('div', { className: 'import-result', 'aria-live': 'polite' });
  const text = field('Egg (JSON or YAML)', h('textarea', { id: 'egg-json', rows: '8', spellcheck: 'false' }), 'Paste a Pterodactyl egg (PTDL_v1, PTDL_v2) or a Pelican one (PLCN, JSON or YAML), or choose its file below.');
  const file = field('Or choose an egg file (.json, .yaml)', h('input', { type: 'file', id: 'egg-file', accept: '.json,.yaml,.yml,application/json,application/yaml' }));
  const submit = h('button', { type: 'submit', className: 'btn btn-primary' }, 'Import egg');
  const form = h(
    'form',
    { className: 'card form import', novalidate: true, 'aria-labelledby': 'import-title' },
    h('h2', { id: 'import-title' }, 'Import egg'),
    text.wrap,
    file.wrap,
    h('div', { className: 'actions' }, submit),
    msg.el,
    result,
  );
  const area = text.control as HTMLTextAreaElement;

  file.control.addEventListener('change', () => {
    const chosen = (file.control as HTMLInputElement).files?.[0];
    if (!chosen) return;
    const reader = new FileReader();
    reader.onload = () => {
      area.value = String(reader.result ?? '');
      text.setError(null);
      msg.info(`Read ${chosen.name}. Press "Import egg" to create the blueprint.`);
    };
    reader.onerror = () => file.setError(`Could not read ${chosen.name}: choose the file again.`);
    reader.readAsText(chosen);
  });

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    msg.clear();
    pageMsg.clear();
    text.setError(null);
    clear(result);
    const parsed = parseEgg(area.value);
    if ('problem' in parsed) {
      text.setError(parsed.problem);
      area.focus();
      return;
    }
    submit.disabled = true;
    try {
      const done =
        'yaml' in parsed
          ? (await gql<{ importBlueprintYaml: Imported }>(M_IMPORT_BLUEPRINT_YAML, { egg: parsed.yaml })).importBlueprintYaml
          : (await gql<{ importBlueprint: Imported }>(M_IMPORT_BLUEPRINT, { egg: parsed.egg })).importBlueprint;
      area.value = '';
      (file.control as HTMLInputElement).value = '';
      result.append(...importedReport(done));
      announce(`Egg imported as ${done.blueprint.name}`);
      onImported();
    } catch (err) {
      const whole = err instanceof ApiError ? err.fields.egg : undefined;
      if (whole !== undefined) {
        // the text as a whole (YAML that does not parse, not a mapping): said next to it
        text.setError(String(whole));
        area.focus();
        msg.error('The egg was not imported: correct the text and import it again.');
      } else if (err instanceof ApiError && Object.keys(err.fields).length) {
        result.append(...refusalReport(err));
        msg.error('The egg was not imported: see the refused fields below.');
      } else msg.error(`Could not import the egg: ${describe(err)}`);
    } finally {
      submit.disabled = false;
    }
  });
  return form;
}
