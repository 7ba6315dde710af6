import { randomBytes } from 'node:crypto';
import type { DocumentRepository } from '../../platform/document-repository.js';
import type { SecretBox } from '../../platform/secret-box.js';

/** The network's security keys, one per security class, as zwave-js takes them. */
export interface ZwaveSecurityKeys {
  S0_Legacy: Uint8Array<ArrayBuffer>;
  S2_Unauthenticated: Uint8Array<ArrayBuffer>;
  S2_Authenticated: Uint8Array<ArrayBuffer>;
  S2_AccessControl: Uint8Array<ArrayBuffer>;
}

const CLASSES = ['S0_Legacy', 'S2_Unauthenticated', 'S2_Authenticated', 'S2_AccessControl'] as const;

export interface StoredKeys {
  id: 'network';
  /** The four keys as hex, sealed with the hub's key (SecretBox): a backup carries them so, like the fleet token. */
  sealed: string;
}

const SEAL_CONTEXT = 'zwave:security-keys';

/**
 * The keys of this hub's Z-Wave network, made at the first start (16 random bytes each) and
 * kept sealed in the database. Losing them means re-including every secure device, so they are
 * never made again while a sealed copy exists: one that does not open (a restore onto a hub
 * with another secret key) is an error, not a reason for new keys.
 */
export async function networkKeys(repository: DocumentRepository<StoredKeys>, box: SecretBox, now: number): Promise<ZwaveSecurityKeys> {
  const stored = await repository.get('network');
  if (stored) {
    const plain = box.open(stored.sealed, SEAL_CONTEXT);
    if (plain === undefined) throw new Error('the stored Z-Wave security keys do not open with this hub\'s secret key (DATA_DIR/secret.key): restore that key, or secure devices must be included again');
    const hex = JSON.parse(plain) as Record<string, string>;
    return Object.fromEntries(CLASSES.map((c) => [c, new Uint8Array(Buffer.from(hex[c] ?? '', 'hex'))])) as unknown as ZwaveSecurityKeys;
  }
  const keys = Object.fromEntries(CLASSES.map((c) => [c, new Uint8Array(randomBytes(16))])) as unknown as ZwaveSecurityKeys;
  const plain = JSON.stringify(Object.fromEntries(CLASSES.map((c) => [c, Buffer.from(keys[c]).toString('hex')])));
  await repository.save({ id: 'network', sealed: box.seal(plain, SEAL_CONTEXT) }, now);
  return keys;
}
