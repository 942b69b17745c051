/**
 * Compress and decompress for the file manager, on the jail (jail.ts), so that every file read or
 * written is checked where it was opened.
 *
 * Decompressing reads the archive twice. The first pass checks every entry and adds up what it would
 * take on disk: an entry that would land outside the destination (`..`, an absolute name), a link
 * pointing outside it, an entry below a link the archive makes, or a device is INVALID_ARCHIVE, and
 * more than the disk allows is DISK_LIMIT, before anything is written. The second pass writes, checking
 * each entry again (the server's processes may change the archive between the passes) and counting the
 * bytes; when it fails, what it made is removed.
 *
 * Compressing writes a .tar.gz (tar-gz.ts: members named as the files are) of files opened through
 * the jail, each read up to the size it had when opened, atomically, within the
 * disk limit.
 */
import type { Stats } from 'node:fs';
import { ENTRY_BYTES, footprint } from './footprint';
import { AgentError } from '../errors';
import { invalidArchive, formatOf, readEntries, type ArchiveEntry } from './archive-entries';
import { alreadyExists, diskLimit, type Entry, type Jail } from './jail';
import { addTarEntry, exactly, tarGz, type TarPack } from './tar-gz';
import { commonParent, displayPath, nameProblem } from './paths';

/** What an entry without contents (a folder, a link) is counted as on disk, as the disk measurement does. */
const onDisk = (e: ArchiveEntry): number => (e.kind === 'file' ? footprint(e.size) : ENTRY_BYTES);

/** The components of an archive name below the destination; INVALID_ARCHIVE when it leads out or is not a plain name. */
export function entryParts(name: string): string[] {
  if (name.startsWith('/') || /^[A-Za-z]:[\\/]/.test(name)) throw invalidArchive(`The archive holds an absolute name (${clip(name)}): it would land outside the destination.`);
  if (name.includes('\u0000') || name.includes('\uFFFD')) throw invalidArchive(`The archive holds a name that is not valid UTF-8 text (${clip(name)}).`);
  const out: string[] = [];
  for (const part of name.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (!out.length) throw invalidArchive(`The archive holds ${clip(name)}, which would land outside the destination.`);
      out.pop();
      continue;
    }
    const problem = nameProblem(part);
    if (problem) throw invalidArchive(`The archive holds ${clip(name)}. ${problem}`);
    out.push(part);
  }
  return out;
}

const clip = (s: string): string => JSON.stringify(s.length > 120 ? s.slice(0, 120) + '…' : s);
const key = (parts: readonly string[]): string => parts.join('/');

/** Checks entries one after another against the ones before them (the same rules on both passes). */
class EntryRules {
  private readonly links = new Set<string>();
  private readonly files = new Set<string>();
  /** folders the archive makes, named or on the way to an entry */
  private readonly folders = new Set<string>();

  /** The entry's components below the destination; throws INVALID_ARCHIVE. */
  check(e: ArchiveEntry): string[] {
    if (e.kind === 'special') throw invalidArchive(`The archive holds ${clip(e.name)}, a device or other special file: the file manager extracts files, folders and links only.`);
    const parts = entryParts(e.name);
    if (!parts.length) {
      if (e.kind === 'directory') return parts;
      throw invalidArchive(`The archive holds an entry without a name (${clip(e.name)}).`);
    }
    for (let i = 1; i <= parts.length; i++) {
      if (this.links.has(key(parts.slice(0, i)))) throw invalidArchive(`The archive holds ${clip(e.name)}, below or over a link it makes: extract the link's target instead.`);
    }
    this.checkKind(parts, e);
    if (e.kind === 'symlink') linkTarget(parts, e);
    if (e.kind === 'hardlink') {
      const target = entryParts(e.target ?? '');
      if (!this.files.has(key(target))) throw invalidArchive(`The archive holds ${clip(e.name)}, a hard link to ${clip(e.target ?? '')}, which is not a file earlier in the archive.`);
    }
    if (e.kind === 'symlink') this.links.add(key(parts));
    if (e.kind === 'file' || e.kind === 'hardlink') this.files.add(key(parts));
    for (let i = 1; i < parts.length; i++) this.folders.add(key(parts.slice(0, i)));
    if (e.kind === 'directory') this.folders.add(key(parts));
    return parts;
  }

  /** An archive that makes one name both a file and a folder cannot be extracted whole: refused before anything is written. */
  private checkKind(parts: readonly string[], e: ArchiveEntry): void {
    const conflict = () => invalidArchive(`The archive holds ${clip(e.name)} both as a file and as a folder: it cannot be extracted whole.`);
    for (let i = 1; i < parts.length; i++) if (this.files.has(key(parts.slice(0, i)))) throw conflict();
    if (e.kind === 'directory' ? this.files.has(key(parts)) : this.folders.has(key(parts))) throw conflict();
  }
}

/**
 * The target a link entry at `parts` is written with: the archive's, made plain and taken from the
 * link's folder (no `.`, no `..` after a name); INVALID_ARCHIVE when it leads out of the destination.
 * Plain, because `a/..` is the link's own folder only while `a` is a folder: written as it is, a link
 * `a` (from the archive, or there already) makes it lead anywhere, out of the server too.
 */
export function linkTarget(parts: readonly string[], e: ArchiveEntry): string {
  const target = e.target ?? '';
  const out = () => invalidArchive(`The archive holds ${clip(e.name)}, a link pointing outside the destination (${clip(target)}).`);
  if (!target || target.startsWith('/')) throw out();
  const from = parts.slice(0, -1);
  const resolved = [...from];
  for (const part of target.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (!resolved.length) throw out();
      resolved.pop();
    } else resolved.push(part);
  }
  let shared = 0;
  while (shared < from.length && shared < resolved.length && from[shared] === resolved[shared]) shared++;
  const plain = [...Array<string>(from.length - shared).fill('..'), ...resolved.slice(shared)];
  return plain.length ? plain.join('/') : '.';
}

/** Runs `fn` over the entries of the archive `archive`, closing it afterwards. */
async function withEntries<T>(jail: Jail, archive: readonly string[], fn: (entries: AsyncGenerator<ArchiveEntry>) => Promise<T>): Promise<T> {
  const { handle } = await jail.openFile(archive);
  try {
    const entries = readEntries(handle, await formatOf(handle, displayPath(archive)));
    try {
      return await fn(entries);
    } finally {
      await entries.return(undefined);
    }
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/**
 * Adds up what the archive would take, checking every entry; INVALID_ARCHIVE or DISK_LIMIT before
 * anything is written. With `noReplace`, an entry (other than a folder) whose place in `destination`
 * holds a file or a link is ALREADY_EXISTS, before anything is written too (a folder there is the
 * extraction's INVALID_STATE, as for anyone; a name the archive holds twice replaces its own first copy).
 */
async function plan(jail: Jail, archive: readonly string[], destination: readonly string[], allowance: number, noReplace: boolean): Promise<void> {
  const seen = new Set<string>();
  await withEntries(jail, archive, async (entries) => {
    const rules = new EntryRules();
    let total = 0;
    for await (const e of entries) {
      const parts = rules.check(e);
      total += onDisk(e);
      if (total > allowance) throw diskLimit();
      if (!noReplace || !parts.length || e.kind === 'directory' || seen.has(parts.join('/'))) continue;
      seen.add(parts.join('/'));
      if (await holdsNonFolder(jail, [...destination, ...parts])) {
        throw alreadyExists(displayPath([...destination, ...parts]), 'replacing a file by decompressing needs file.update');
      }
    }
  });
}

/** Whether a file or a link is at `parts` (nothing there, a folder, or a folder on the way missing: no). */
async function holdsNonFolder(jail: Jail, parts: readonly string[]): Promise<boolean> {
  return jail.stat(parts).then(
    (entry) => entry.type !== 'directory',
    (e) => (e instanceof AgentError && (e.status === 404 || e.code === 'INVALID_STATE') ? false : Promise.reject(e)),
  );
}

/**
 * Extracts `archive` into the folder `destination` (made when missing), within `allowance` bytes.
 * Returns the entries it made or replaced at the top of the destination. With `noReplace` (a caller
 * who may make files but not change them) it replaces nothing: a file in the way is ALREADY_EXISTS,
 * found before anything is written, or kept when it was made during the extraction.
 */
export async function decompress(jail: Jail, archive: readonly string[], destination: readonly string[], allowance: number, noReplace = false): Promise<Entry[]> {
  await plan(jail, archive, destination, allowance, noReplace);
  const made: string[][] = [];
  const top = new Set<string>();
  // the files this extraction wrote: a name the archive holds twice replaces its own first copy
  const written = new Set<string>();
  try {
    made.push(...(await jail.mkdirp(destination)));
    await withEntries(jail, archive, async (entries) => {
      const rules = new EntryRules();
      let left = allowance;
      for await (const e of entries) {
        const parts = rules.check(e);
        if (!parts.length) continue;
        left -= e.kind === 'file' ? 0 : ENTRY_BYTES;
        if (left < 0) throw diskLimit();
        const key = parts.join('/');
        left -= await extractOne(jail, destination, parts, e, left, made, noReplace && !written.has(key));
        written.add(key);
        top.add(parts[0]!);
      }
    });
  } catch (err) {
    for (const parts of made.reverse()) await jail.remove(parts).catch(() => undefined);
    throw err;
  }
  const out: Entry[] = [];
  for (const name of [...top].sort()) out.push(await jail.stat([...destination, name]));
  return out;
}

/** Writes one entry at `parts` below `destination`; returns the bytes of contents it wrote and adds what it made to `made`. */
async function extractOne(jail: Jail, destination: readonly string[], parts: readonly string[], e: ArchiveEntry, allowance: number, made: string[][], noReplace: boolean): Promise<number> {
  const at = [...destination, ...parts];
  made.push(...(await jail.mkdirp(at.slice(0, -1))));
  if (e.kind === 'directory') {
    made.push(...(await jail.mkdirp(at)));
    return 0;
  }
  if (e.kind === 'symlink') {
    await jail.symlink(at, linkTarget(parts, e));
    made.push(at);
    return 0;
  }
  const data = e.kind === 'file' ? e.contents() : await copyOf(jail, destination, e.target!);
  // owner read and write kept, so that the server can change and delete what it unpacked
  const { entry, created } = await jail.writeFile(at, data, allowance, (e.mode & 0o777) | 0o600, noReplace);
  if (created) made.push(at);
  return entry.size;
}

/** The contents of the file a hard link repeats (written again: a copy, not a link). */
async function copyOf(jail: Jail, destination: readonly string[], target: string): Promise<AsyncIterable<Buffer>> {
  const { handle } = await jail.openFile([...destination, ...entryParts(target)]);
  return (async function* () {
    try {
      for await (const chunk of handle.createReadStream({ autoClose: false }) as AsyncIterable<Buffer>) yield chunk;
    } finally {
      await handle.close().catch(() => undefined);
    }
  })();
}

/**
 * Writes a .tar.gz of `paths` (folders with everything in them; names relative to the folder they
 * share; the root stands for everything in it) at `target`, which must not exist.
 */
export async function compress(jail: Jail, paths: readonly (readonly string[])[], target: readonly string[], allowance: number): Promise<Entry> {
  if (!target.length) throw new AgentError(422, 'INVALID_PATH', 'The archive needs a file name.');
  if (await jail.stat(target).catch((e) => (e instanceof AgentError && e.status === 404 ? null : Promise.reject(e)))) throw alreadyExists(displayPath(target));
  const roots = paths.some((p) => !p.length) ? (await jail.list([], 1, 1_000_000)).items.map((i) => [i.name]) : paths;
  const base = commonParent(roots);
  const { pack, gzip } = tarGz();
  const writing = jail.writeFile(target, gzip, allowance);
  // a failed write (the disk limit) stops the archive, and the entry it was taking
  let stop!: (err: unknown) => void;
  const stopped = new Promise<never>((_, reject) => (stop = reject));
  stopped.catch(() => undefined);
  writing.catch((err) => {
    stop(err);
    pack.destroy();
  });
  try {
    for (const p of roots) await jail.walk(p, (parts, st) => Promise.race([addWalked(jail, pack, parts, parts.slice(base.length).join('/'), st), stopped]));
    pack.finalize();
  } catch (err) {
    // the write fails too (its temporary file removed): a half archive is never renamed into place
    gzip.destroy(err as Error);
    const writeError = await writing.then(() => null, (e: unknown) => e);
    throw writeError instanceof AgentError ? writeError : err;
  }
  return (await writing).entry;
}

/**
 * Adds one walked entry to the archive, named as it is, and waits until it is in (one open file at a
 * time). A file is read as opened, up to the size it had then (see `exactly`).
 */
async function addWalked(jail: Jail, pack: TarPack, parts: string[], name: string, st: Stats): Promise<void> {
  const header = { mode: st.mode & 0o777, mtime: st.mtime };
  if (st.isDirectory()) return addTarEntry(pack, { ...header, name: `${name}/`, type: 'directory' });
  if (st.isSymbolicLink()) return addTarEntry(pack, { ...header, name, type: 'symlink', linkname: await jail.readlink(parts) });
  if (!st.isFile()) return; // sockets, fifos and devices are left out
  const { handle, size } = await jail.openFile(parts);
  try {
    const body = size ? exactly(handle.createReadStream({ start: 0, end: size - 1, autoClose: false }), size) : undefined;
    await addTarEntry(pack, { ...header, name, type: 'file', size }, body);
  } finally {
    await handle.close().catch(() => undefined);
  }
}
