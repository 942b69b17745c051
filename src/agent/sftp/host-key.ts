/**
 * The node's SFTP host key: an Ed25519 key made the first time the agent starts and kept in its data
 * folder (readable by the agent only), so that clients see the same key on every start and can pin
 * it. Its fingerprint (`SHA256:…`, as OpenSSH shows it) goes on the node's record in the panel.
 */
import { createHash, randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import { utils } from 'ssh2';

export interface HostKey {
  privateKey: string;
  fingerprint: string;
}

/**
 * A new Ed25519 key in OpenSSH's format. ssh2's generator writes, about once in 170 keys, one that
 * its own parser then refuses ("Malformed OpenSSH private key"): such a key is thrown away.
 */
export function newKey(): string {
  for (let i = 0; i < 20; i++) {
    const key = utils.generateKeyPairSync('ed25519').private;
    if (!(utils.parseKey(key) instanceof Error)) return key;
  }
  throw new Error('could not make an SFTP host key that ssh2 can read');
}

export async function loadHostKey(file: string): Promise<HostKey> {
  let privateKey = await fsp.readFile(file, 'utf8').catch(() => null);
  if (!privateKey) {
    // written whole beside it, then linked into place: a reader never sees half a key, and of two
    // agents starting on one folder at once the first key wins (the second link finds it there)
    const made = newKey();
    const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
    await fsp.writeFile(temp, made, { mode: 0o600 });
    await fsp.link(temp, file).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
    });
    await fsp.unlink(temp);
    privateKey = await fsp.readFile(file, 'utf8');
  }
  const parsed = utils.parseKey(privateKey);
  if (parsed instanceof Error) throw new Error(`the SFTP host key in ${file} cannot be read (${parsed.message}): remove it to make a new one`);
  const key = Array.isArray(parsed) ? parsed[0]! : parsed;
  const fingerprint = 'SHA256:' + createHash('sha256').update(key.getPublicSSH()).digest('base64').replace(/=+$/, '');
  return { privateKey, fingerprint };
}
