/**
 * Writing .tar.gz archives (backup downloads, the file manager's compress) with tar-stream, each
 * member named exactly as given. archiver rewrites names: `\` becomes `/` and a leading `word:` is
 * dropped as a drive letter, so one Linux file name (`..\..\evil.txt`, `minecraft:stone.json`) became
 * a path with `..` parts or another file's name.
 */
import { Readable } from 'node:stream';
import { createGzip, type Gzip } from 'node:zlib';
import { pack as tarPack, type Pack } from 'tar-stream';

export type TarPack = Pack;
export type TarHeader = Parameters<Pack['entry']>[0];

/** A pack whose bytes come out of `gzip` (level 6); either one gone (the reader cut off, an error) takes the other with it. */
export function tarGz(): { pack: Pack; gzip: Gzip } {
  const pack = tarPack();
  const gzip = createGzip({ level: 6 });
  gzip.once('close', () => pack.destroy());
  pack.on('error', (err: Error) => gzip.destroy(err));
  pack.pipe(gzip);
  return { pack, gzip };
}

/** Adds one entry (with `body` its contents, `header.size` bytes) to the pack; resolves once it is in, rejects when it cannot be. */
export function addTarEntry(pack: Pack, header: TarHeader, body?: Readable): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const sink = pack.entry(header, (err) => (err ? reject(err) : resolve()));
    // a folder or a link: no body
    if (!body) return void sink.end(null);
    body.on('error', (err) => {
      sink.destroy(err);
      reject(err);
    });
    // (its failure, a body of another size than the header's included, is the pack's too)
    sink.on('error', reject);
    // the pack gone (the archive cut off), the body is closed with it
    sink.on('close', () => body.destroy());
    body.pipe(sink as unknown as NodeJS.WritableStream);
  });
}

const PAD_CHUNK = 64 * 1024;

/**
 * `size` bytes of a file read from `source`, which reads no further than `size` (a file that grew
 * since its size was taken, a log being written): if it ends short (the file shrank meanwhile), the
 * rest is zeros, as GNU tar does, so that the member keeps the size its header announced.
 */
export function exactly(source: AsyncIterable<Buffer>, size: number): Readable {
  return Readable.from(
    (async function* () {
      let read = 0;
      for await (const chunk of source) {
        read += chunk.length;
        yield chunk;
      }
      for (let left = size - read; left > 0; left -= PAD_CHUNK) yield Buffer.alloc(Math.min(left, PAD_CHUNK));
    })(),
  );
}
