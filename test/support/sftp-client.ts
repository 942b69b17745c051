/** An SFTP client for tests (the ssh2 package's), with promises. */
import { createHash } from 'node:crypto';
import { Client, type SFTPWrapper, type Stats, type FileEntryWithStats } from 'ssh2';

export interface SftpConnection {
  sftp: SFTPWrapper;
  /** the host key the server showed, as OpenSSH prints its fingerprint */
  fingerprint: string;
  /** resolves when the connection closes (from either side) */
  closed: Promise<void>;
  end(): void;
  readdir(path: string): Promise<FileEntryWithStats[]>;
  stat(path: string): Promise<Stats>;
  lstat(path: string): Promise<Stats>;
  readFile(path: string): Promise<Buffer>;
  writeFile(path: string, data: Buffer | string): Promise<void>;
  mkdir(path: string): Promise<void>;
  rmdir(path: string): Promise<void>;
  unlink(path: string): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  chmod(path: string, mode: number): Promise<void>;
  realpath(path: string): Promise<string>;
  readlink(path: string): Promise<string>;
  symlink(target: string, link: string): Promise<void>;
}

type Callback<T> = (err: Error | null | undefined, value?: T) => void;
const call = <T>(fn: (cb: Callback<T>) => void): Promise<T> => new Promise((resolve, reject) => fn((err, value) => (err ? reject(err) : resolve(value as T))));

export function connectSftp(opts: { port: number; username: string; password: string; host?: string }): Promise<SftpConnection> {
  const client = new Client();
  let fingerprint = '';
  const closed = new Promise<void>((resolve) => client.once('close', () => resolve()));
  return new Promise((resolve, reject) => {
    client.once('error', reject);
    // settled already when it was ready
    client.once('close', () => reject(new Error('the connection closed before the SFTP session was ready')));
    client.once('ready', () => {
      client.sftp((err, sftp) => {
        if (err) return reject(err);
        client.off('error', reject);
        client.on('error', () => undefined);
        resolve({
          sftp,
          fingerprint,
          closed,
          end: () => client.end(),
          readdir: (p) => call((cb) => sftp.readdir(p, cb)),
          stat: (p) => call((cb) => sftp.stat(p, cb)),
          lstat: (p) => call((cb) => sftp.lstat(p, cb)),
          readFile: (p) => call((cb) => sftp.readFile(p, cb)),
          writeFile: (p, data) => call((cb) => sftp.writeFile(p, data, (e) => cb(e))),
          mkdir: (p) => call((cb) => sftp.mkdir(p, (e) => cb(e))),
          rmdir: (p) => call((cb) => sftp.rmdir(p, (e) => cb(e))),
          unlink: (p) => call((cb) => sftp.unlink(p, (e) => cb(e))),
          rename: (a, b) => call((cb) => sftp.rename(a, b, (e) => cb(e))),
          chmod: (p, mode) => call((cb) => sftp.chmod(p, mode, (e) => cb(e))),
          realpath: (p) => call((cb) => sftp.realpath(p, cb)),
          readlink: (p) => call((cb) => sftp.readlink(p, cb)),
          symlink: (target, link) => call((cb) => sftp.symlink(target, link, (e) => cb(e))),
        });
      });
    });
    client.connect({
      host: opts.host ?? '127.0.0.1',
      port: opts.port,
      username: opts.username,
      password: opts.password,
      readyTimeout: 10_000,
      hostVerifier: (key: Buffer) => {
        fingerprint = 'SHA256:' + createHash('sha256').update(key).digest('base64').replace(/=+$/, '');
        return true;
      },
    });
  });
}
