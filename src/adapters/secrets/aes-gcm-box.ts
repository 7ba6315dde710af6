import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { SecretBox } from '../../platform/secret-box.js';
import { SECRET_KEY_BYTES } from './key-file.js';

const IV_BYTES = 12;
const TAG_BYTES = 16;
const VERSION = 'v1';
/** `v1:<iv>:<tag>:<ciphertext>`, each base64url without padding (12 bytes: 16 characters; 16 bytes: 22). */
const SEALED_V1 = /^v1:([A-Za-z0-9_-]{16}):([A-Za-z0-9_-]{22}):([A-Za-z0-9_-]*)$/;

/** Whether a stored value is sealed (any `v<n>:` version): a value kept in clear from before is not. */
export function isSealedText(value: string): boolean {
  return /^v\d+:/.test(value);
}

/**
 * Values sealed with AES-256-GCM under the hub's key: a random 12-byte IV per value, the record's
 * context as additional authenticated data (a value moved to another record does not open), and
 * the 16-byte tag (an altered value does not open either).
 */
export class AesGcmSecretBox implements SecretBox {
  private readonly key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== SECRET_KEY_BYTES) throw new Error(`a secret key is ${SECRET_KEY_BYTES} bytes, not ${key.length}`);
    this.key = Buffer.from(key);
  }

  seal(plain: string, context: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return [VERSION, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ciphertext.toString('base64url')].join(':');
  }

  open(sealed: string, context: string): string | undefined {
    const parts = SEALED_V1.exec(sealed);
    if (!parts) return undefined;
    const iv = Buffer.from(parts[1]!, 'base64url');
    const tag = Buffer.from(parts[2]!, 'base64url');
    if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, iv, { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(Buffer.from(parts[3]!, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      // Another key, another record, or altered: the tag does not match.
      return undefined;
    }
  }

  isSealed(value: string): boolean {
    return isSealedText(value);
  }
}
