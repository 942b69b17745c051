/**
 * The panel's master key, used to encrypt node keys at rest (AES-256-GCM). Kept in
 * `<DATA_DIR>/keys/master.key` (0600), created at first start, or given as MASTER_KEY (base64). Several
 * gateway instances must share it: copy the file or set the same MASTER_KEY on each.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export class MasterKey {
  private constructor(private readonly key: Buffer) {}

  static load(dataDir: string, fromEnv: string | undefined = process.env.MASTER_KEY): MasterKey {
    if (fromEnv) {
      const key = Buffer.from(fromEnv, 'base64');
      if (key.length !== 32) throw new Error('MASTER_KEY must be 32 bytes in base64 (e.g. `openssl rand -base64 32`)');
      return new MasterKey(key);
    }
    const file = path.join(dataDir, 'keys', 'master.key');
    if (!existsSync(file)) {
      mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
      try {
        writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600, flag: 'wx' });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
    }
    const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
    if (key.length !== 32) throw new Error(`${file} does not hold a 32-byte base64 key`);
    return new MasterKey(key);
  }

  encrypt(plain: Buffer): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const data = Buffer.concat([cipher.update(plain), cipher.final()]);
    return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), data.toString('base64url')].join('.');
  }

  decrypt(sealed: string): Buffer {
    const [v, iv, tag, data] = sealed.split('.');
    if (v !== 'v1' || !iv || !tag || !data) throw new Error('unknown sealed format');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]);
  }
}
