/** A refusal of the panel shown where it belongs: each of `details.fields` next to its field, the rest in the message box. */
import { ApiError, describe } from '../api';
import type { messageBox } from '../dom';

/** What can show a field's message: a `field()` of dom.ts or a cell of a table. */
export interface ErrorTarget {
  control: HTMLElement;
  setError(msg: string | null): void;
}

/**
 * Shows `err`: the fields that `target(name)` knows get their message, the others are named in the
 * message box after `what` ("Could not save"). Focus moves to the first refused field.
 */
export function showRefusal(err: unknown, target: (name: string) => ErrorTarget | null, msg: ReturnType<typeof messageBox>, what: string): void {
  const fields = err instanceof ApiError ? Object.entries(err.fields) : [];
  if (!fields.length) return msg.error(`${what}: ${describe(err)}`);
  const elsewhere: string[] = [];
  let first: HTMLElement | null = null;
  for (const [name, message] of fields) {
    const t = target(name);
    if (t) {
      t.setError(String(message));
      first ??= t.control;
    } else elsewhere.push(`${name} ${String(message)}`);
  }
  // none highlighted: describe() names them all
  if (!first) return msg.error(`${what}: ${describe(err)}`);
  const lead = `${what}: correct the highlighted fields and try again.`;
  msg.error(elsewhere.length ? `${lead} ${elsewhere.join('; ')}.` : lead);
  first.focus();
}
