import type { Clock, Timers } from '../../platform/clock.js';
import { CastPairingFailure, type CastPairer, type PairingSession } from '../../domain/media/ports.js';
import { generateClientIdentity } from './identity.js';
import { AndroidTvPairing } from './pairing.js';
import { AndroidTvError } from './session.js';

/**
 * Cast pairing over Android TV Remote v2: a fresh client identity per pairing (the TV remembers
 * the certificate it was paired with), the exchange up to the code, then the secret.
 */
export class AndroidTvPairer implements CastPairer {
  constructor(private readonly options: { clock: Clock; timers: Timers }) {}

  async start(target: { host: string; port: number; clientName: string; timeoutMs: number }): Promise<PairingSession> {
    const identity = generateClientIdentity(target.clientName, this.options.clock);
    let pairing: AndroidTvPairing;
    try {
      pairing = await AndroidTvPairing.start({ host: target.host, port: target.port, identity, clientName: target.clientName, timeoutMs: target.timeoutMs, timers: this.options.timers });
    } catch (err) {
      throw asFailure(err);
    }
    return {
      async finish(code) {
        try {
          const { serverCertificatePem } = await pairing.finish(code, target.timeoutMs);
          return { certificatePem: identity.certificatePem, privateKeyPem: identity.privateKeyPem, serverCertificatePem };
        } catch (err) {
          throw asFailure(err);
        }
      },
      cancel: () => pairing.cancel(),
    };
  }
}

function asFailure(err: unknown): CastPairingFailure {
  if (err instanceof AndroidTvError) return new CastPairingFailure(err.failure, err.message);
  return new CastPairingFailure('protocol', err instanceof Error ? err.message : String(err));
}
