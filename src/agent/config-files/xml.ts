/**
 * The `xml` parser of configuration files, as Wings applies it: a key `a.b.c` is the element path
 * a/b/c from the root element `a`; the element's text becomes the value, and missing elements on
 * the way are created (a missing file gets the root too). Parsing and writing are @xmldom/xmldom's:
 * the rest of the file (comments, declaration, attributes, order, indentation) goes through its DOM
 * as it was; a new element is indented like its siblings. A file with a DOCTYPE is refused before
 * anything is written: its entities are never expanded (no external entities, no "billion laughs").
 */
import { DOMImplementation, DOMParser, XMLSerializer, type Document, type Element, type Node } from '@xmldom/xmldom';
import { parserKeyProblem } from '../../shared/config-file-checks';
import { ConfigParseError } from './errors';

const ELEMENT_NODE = 1;
const TEXT_NODE = 3;
const CDATA_SECTION_NODE = 4;
const INDENT = '    ';

export function editXml(text: string, entries: [key: string, value: string][]): string {
  // the panel refuses keys that are no element path; an older blueprint may hold one
  const paths = entries.filter(([key]) => parserKeyProblem('xml', key) === null);
  if (!paths.length) return text;
  let doc: Document | null = text.trim() === '' ? null : parse(text);
  const created = doc === null;
  for (const [key, value] of paths) {
    const [rootName, ...path] = key.split('.') as [string, ...string[]];
    doc ??= new DOMImplementation().createDocument(null, rootName);
    const root = doc.documentElement!;
    if (root.tagName !== rootName) throw new ConfigParseError(`its root element is <${root.tagName}>, not <${rootName}> as the key ${key} says`);
    setText(path.reduce((el, name) => childElement(el, name) ?? appendElement(el, name), root), value);
  }
  const out = new XMLSerializer().serializeToString(doc!);
  if (created) return `<?xml version="1.0" encoding="UTF-8"?>\n${out}\n`;
  return text.endsWith('\n') && !out.endsWith('\n') ? out + '\n' : out;
}

function parse(text: string): Document {
  const errors: string[] = [];
  let doc: Document;
  try {
    doc = new DOMParser({ onError: (level, message) => void (level !== 'warning' && errors.push(message)) }).parseFromString(text, 'text/xml');
  } catch (err) {
    throw new ConfigParseError(`it is not valid XML (${firstLine((err as Error).message)})`);
  }
  // xmldom does not expand declared entities, but a file that declares any is not ours to rewrite
  if (doc.doctype) throw new ConfigParseError('it has a DOCTYPE (entity declarations are refused)');
  if (errors.length) throw new ConfigParseError(`it is not valid XML (${firstLine(errors[0]!)})`);
  if (!doc.documentElement) throw new ConfigParseError('it has no root element');
  return doc;
}

function childElement(parent: Element, name: string): Element | null {
  for (let n = parent.firstChild; n; n = n.nextSibling) if (n.nodeType === ELEMENT_NODE && (n as Element).tagName === name) return n as Element;
  return null;
}

/** A new element `name` at the end of `parent`, on a line of its own when the file is indented. */
function appendElement(parent: Element, name: string): Element {
  const doc = parent.ownerDocument!;
  const el = doc.createElement(name);
  const last = parent.lastChild;
  const lastElement = [...nodes(parent)].reverse().find((n) => n.nodeType === ELEMENT_NODE);
  if (lastElement && last && isBlank(last) && lastElement.previousSibling && isBlank(lastElement.previousSibling)) {
    // `<p>⏎␣␣<a/>⏎</p>`: the new element goes before the closing line, indented as its siblings
    parent.insertBefore(doc.createTextNode(lastElement.previousSibling.nodeValue!), last);
    parent.insertBefore(el, last);
  } else if (!parent.firstChild) {
    const indent = indentOf(parent);
    parent.appendChild(doc.createTextNode(`\n${indent}${INDENT}`));
    parent.appendChild(el);
    parent.appendChild(doc.createTextNode(`\n${indent}`));
  } else {
    parent.appendChild(el);
  }
  return el;
}

/** The element's text children give way to `value`; child elements stay. */
function setText(el: Element, value: string): void {
  for (const n of [...nodes(el)]) if (n.nodeType === TEXT_NODE || n.nodeType === CDATA_SECTION_NODE) el.removeChild(n);
  el.insertBefore(el.ownerDocument!.createTextNode(value), el.firstChild);
}

/** The whitespace before `el` on its line ('' for the root). */
function indentOf(el: Element): string {
  const before = el.previousSibling;
  return before && isBlank(before) ? /[ \t]*$/.exec(before.nodeValue!)![0] : '';
}

function isBlank(n: Node): boolean {
  return n.nodeType === TEXT_NODE && /^\s*$/.test(n.nodeValue ?? '');
}

function* nodes(parent: Element): Generator<Node> {
  for (let n = parent.firstChild; n; n = n.nextSibling) yield n;
}

const firstLine = (s: string) => s.split('\n')[0]!.trim();
