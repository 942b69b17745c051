/**
 * A key given twice in one YAML mapping, found in one pass. yaml's own `uniqueKeys` check compares
 * every key of a mapping with every other one: a flat file of 88,000 keys (1 MiB) takes it minutes.
 * Both the panel (eggs) and the agent (configuration files) parse with `uniqueKeys: false` and ask
 * this instead.
 */
import { isScalar, visit, type Document, type Node } from 'yaml';

export interface RepeatedKey {
  /** the key as text, at most 100 characters */
  key: string;
  /** where its second occurrence starts (an offset into the text), when known */
  offset: number | null;
}

/** The first scalar (or other) key that a mapping of the document holds twice, or null. */
export function repeatedKey(doc: Document): RepeatedKey | null {
  let twice: RepeatedKey | null = null;
  visit(doc, {
    Map(_, map) {
      const seen = new Set<unknown>();
      for (const { key } of map.items) {
        const id = isScalar(key) ? key.value : key;
        if (seen.has(id)) {
          twice = { key: String(id).slice(0, 100), offset: (key as Node | null)?.range?.[0] ?? null };
          return visit.BREAK;
        }
        seen.add(id);
      }
      return undefined;
    },
  });
  return twice;
}
