/**
 * The entries of an archive the file manager opens: tar and tar.gz read by `tar` (node-tar), zip by
 * `yauzl`, one shape for both. The format is told by the file's first bytes, not its name. What an
 * entry may be and where it may land is archives.ts's business; a damaged or unknown archive is
 * INVALID_ARCHIVE here.
 */
import { closeSync, openSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Parser, type ReadEntry } from 'tar';
import yauzl from 'yauzl';
import { AgentError } from '../errors';

export type ArchiveFormat = 'tar' | 'zip';
export type EntryKind = 'file' | 'directory' | 'symlink' | 'hardlink' | 'special';

export interface ArchiveEntry {
  /** the name as the archive gives it */
  name: string;
  kind: EntryKind;
  /** bytes of a file's contents */
  size: number;
  /** permission bits */
  mode: number;
  /** what a symlink points to, or the archive name a hard link repeats */
  target?: string;
  /** a file's contents (read each entry's at most once, before asking for the next entry) */
  contents(): AsyncIterable<Buffer>;
}

export const invalidArchive = (message: string): AgentError => new AgentError(422, 'INVALID_ARCHIVE', message);

/** The longest symlink target read from a zip (its target is the entry's contents). */
const MAX_LINK_BYTES = 4096;

/** Which format `handle` holds, from its first bytes: zip, gzip (a tar.gz) or ustar. */
export async function formatOf(handle: FileHandle, name: string): Promise<ArchiveFormat> {
  const head = Buffer.alloc(262);
  const { bytesRead } = await handle.read(head, 0, head.length, 0);
  const b = head.subarray(0, bytesRead);
  if (b.length >= 4 && b[0] === 0x50 && b[1] === 0x4b && (b[2] === 3 || b[2] === 5) && (b[3] === 4 || b[3] === 6)) return 'zip';
  if (b.length >= 2 && b[0] === 0x1f && b[1] === 0x8b) return 'tar';
  if (b.length >= 262 && b.subarray(257, 262).toString('latin1') === 'ustar') return 'tar';
  if (/\.tar$/i.test(name) && b.length >= 512) return 'tar'; // an old tar without the ustar mark
  throw invalidArchive(`${name} is not an archive the file manager opens: .tar.gz, .tgz, .tar or .zip.`);
}

/** The entries of `handle`, one at a time. */
export function readEntries(handle: FileHandle, format: ArchiveFormat): AsyncGenerator<ArchiveEntry> {
  return format === 'zip' ? zipEntries(handle) : tarEntries(handle);
}

const TAR_KINDS: Partial<Record<string, EntryKind>> = {
  File: 'file',
  OldFile: 'file',
  ContiguousFile: 'file',
  Directory: 'directory',
  SymbolicLink: 'symlink',
  Link: 'hardlink',
  CharacterDevice: 'special',
  BlockDevice: 'special',
  FIFO: 'special',
};

async function* tarEntries(handle: FileHandle): AsyncGenerator<ArchiveEntry> {
  const parser = new Parser({ strict: true });
  const queue: (ReadEntry | Error | null)[] = [];
  let wake: (() => void) | null = null;
  const push = (item: ReadEntry | Error | null) => {
    queue.push(item);
    wake?.();
  };
  parser.on('entry', (e: ReadEntry) => push(e));
  parser.on('end', () => push(null));
  const source = handle.createReadStream({ start: 0, autoClose: false });
  const feeding = pipeline(source, parser).catch((err: Error) => push(invalidArchive(`The archive is damaged: ${err.message}`)));
  try {
    for (;;) {
      while (!queue.length) await new Promise<void>((r) => (wake = r));
      wake = null;
      const item = queue.shift()!;
      if (item === null) break;
      if (item instanceof Error) throw item;
      let read = false;
      yield {
        name: item.path,
        kind: TAR_KINDS[item.type] ?? 'special',
        size: item.size ?? 0,
        mode: (item.mode ?? 0o644) & 0o777,
        target: item.linkpath,
        contents: () => {
          read = true;
          return item as unknown as AsyncIterable<Buffer>;
        },
      };
      if (!read) item.resume();
    }
    await feeding;
  } finally {
    source.destroy();
  }
}

const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;
const S_IFDIR = 0o040000;
const S_IFREG = 0o100000;
const UNIX_HOST = 3;

function zipKind(entry: yauzl.Entry): EntryKind {
  const unixMode = entry.versionMadeBy >> 8 === UNIX_HOST ? entry.externalFileAttributes >>> 16 : 0;
  const type = unixMode & S_IFMT;
  if (entry.fileName.endsWith('/') || type === S_IFDIR) return 'directory';
  if (type === S_IFLNK) return 'symlink';
  if (type === 0 || type === S_IFREG) return 'file';
  return 'special';
}

const openZip = (fd: number): Promise<yauzl.ZipFile> =>
  new Promise((resolve, reject) =>
    yauzl.fromFd(fd, { lazyEntries: true, autoClose: false, decodeStrings: true, validateEntrySizes: true, strictFileNames: false }, (err, zip) =>
      err ? reject(err) : resolve(zip),
    ),
  );

const nextZipEntry = (zip: yauzl.ZipFile): Promise<yauzl.Entry | null> =>
  new Promise((resolve, reject) => {
    const cleanup = () => {
      zip.off('entry', onEntry);
      zip.off('end', onEnd);
      zip.off('error', onError);
    };
    const onEntry = (e: yauzl.Entry) => (cleanup(), resolve(e));
    const onEnd = () => (cleanup(), resolve(null));
    const onError = (err: Error) => (cleanup(), reject(err));
    zip.on('entry', onEntry);
    zip.on('end', onEnd);
    zip.on('error', onError);
    zip.readEntry();
  });

const openZipStream = (zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<Readable> =>
  new Promise((resolve, reject) => zip.openReadStream(entry, (err, stream) => (err ? reject(err) : resolve(stream))));

async function readAll(stream: Readable, max: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const c of stream as AsyncIterable<Buffer>) {
    n += c.length;
    if (n > max) throw invalidArchive('A symlink in the archive has a target longer than 4096 bytes.');
    chunks.push(c);
  }
  return Buffer.concat(chunks);
}

async function* zipEntries(handle: FileHandle): AsyncGenerator<ArchiveEntry> {
  const damaged = (err: unknown) => (err instanceof AgentError ? err : invalidArchive(`The archive is damaged or not supported: ${(err as Error).message}`));
  // a descriptor of its own for yauzl, which closes what it reads from (the same file: /proc reopens the inode)
  const fd = openSync(`/proc/self/fd/${handle.fd}`, 'r');
  let zip: yauzl.ZipFile;
  try {
    zip = await openZip(fd);
  } catch (err) {
    closeSync(fd);
    throw damaged(err);
  }
  try {
    for (;;) {
      const entry = await nextZipEntry(zip).catch((err) => Promise.reject(damaged(err)));
      if (!entry) return;
      const kind = zipKind(entry);
      const unixMode = entry.versionMadeBy >> 8 === UNIX_HOST ? (entry.externalFileAttributes >>> 16) & 0o777 : 0;
      const target = kind === 'symlink' ? (await readAll(await openZipStream(zip, entry), MAX_LINK_BYTES).catch((e) => Promise.reject(damaged(e)))).toString('utf8') : undefined;
      yield {
        name: entry.fileName,
        kind,
        size: kind === 'file' ? entry.uncompressedSize : 0,
        mode: unixMode || (kind === 'directory' ? 0o755 : 0o644),
        target,
        contents: () => zipContents(zip, entry, damaged),
      };
    }
  } finally {
    zip.close();
  }
}

async function* zipContents(zip: yauzl.ZipFile, entry: yauzl.Entry, damaged: (err: unknown) => AgentError): AsyncGenerator<Buffer> {
  let stream: Readable;
  try {
    stream = await openZipStream(zip, entry);
  } catch (err) {
    throw damaged(err);
  }
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) yield chunk;
  } catch (err) {
    throw damaged(err);
  } finally {
    stream.destroy();
  }
}
