import type { Timers } from '../../platform/clock.js';
import type { HubModule, NoOperations } from '../../platform/module.js';
import type { SecretBox } from '../../platform/secret-box.js';
import { AesGcmSecretBox, isSealedText } from './aes-gcm-box.js';
import { loadOrCreateSecretKey, type KeyFileLog } from './key-file.js';

export interface SecretsModule extends HubModule<NoOperations> {
  /** Seals and opens with the hub's key; usable once the module has started (every module needing `secrets` starts after it). */
  readonly box: SecretBox;
}

/**
 * The hub's secret key (`DATA_DIR/secret.key`, never in a backup): read at start, or made at the
 * first one. A key file that cannot be used stops the start with a message saying what to do.
 */
export function secretsModule(deps: { file: string; log: KeyFileLog; timers: Timers }): SecretsModule {
  let box: AesGcmSecretBox | undefined;
  const loaded = (): AesGcmSecretBox => {
    if (!box) throw new Error('the secret key is not loaded: the secrets module has not started');
    return box;
  };
  return {
    name: 'secrets',
    needs: [],
    operations: {},
    box: {
      seal: (plain, context) => loaded().seal(plain, context),
      open: (sealed, context) => loaded().open(sealed, context),
      isSealed: isSealedText,
    },
    async start() {
      const key = await loadOrCreateSecretKey(deps.file, deps.log, deps.timers);
      box = new AesGcmSecretBox(key);
      key.fill(0);
    },
  };
}
