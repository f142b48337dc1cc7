import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/** Encrypts secrets at rest (AES-256-GCM) and hashes the ones we only compare. */
export interface SecretBox {
  encrypt(plaintext: string): string;
  decrypt(ciphertext: string): string;
}

/** `v1.<iv>.<tag>.<ciphertext>` in base64url, under a 32-byte master key. */
export function createSecretBox(masterKeyHex: string): SecretBox {
  const key = Buffer.from(masterKeyHex, 'hex');
  if (key.length !== 32) throw new Error('master key must be 32 bytes (64 hex characters)');
  return {
    encrypt(plaintext) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return ['v1', iv, cipher.getAuthTag(), body]
        .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
        .join('.');
    },
    decrypt(ciphertext) {
      const [version, iv, tag, body] = ciphertext.split('.');
      if (version !== 'v1' || !iv || !tag || body === undefined) throw new Error('unrecognised secret format');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}

/** SHA-256 hex of a high-entropy secret (keys we generate; never for passwords). */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** A random secret with a readable prefix, e.g. `pts_sk_…`. */
export function generateSecret(prefix: string): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}
