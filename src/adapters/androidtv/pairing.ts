import { X509Certificate } from 'node:crypto';
import type { Timers } from '../../platform/clock.js';
import { codeChecks, pairingSecret, type ClientIdentity } from './identity.js';
import { ENCODING_HEXADECIMAL, OuterMessage, PAIRING_PROTOCOL_VERSION, ROLE_INPUT, STATUS } from './messages.js';
import { AndroidTvError, Expectation, FramedSession } from './session.js';

export const ANDROID_TV_PAIRING_PORT = 6467;

const has = (field: string) => (m: Record<string, unknown>) => m[field] !== undefined || m.status !== STATUS.OK;

/**
 * The pairing exchange with an Android TV (polo, port 6467), client side: request, options and
 * configuration, after which the TV shows a 6-hex-digit code; then the secret made from that code
 * and both certificates' keys. On success the TV trusts the client identity for the remote
 * channel from then on.
 */
export class AndroidTvPairing {
  private readonly expect: Expectation;
  private readonly session: FramedSession;
  private serverCertificatePem = '';

  private constructor(
    private readonly identity: ClientIdentity,
    private readonly timeoutMs: number,
    timers: Timers,
  ) {
    this.expect = new Expectation(timers);
    // One answer is awaited at a time; anything else from the TV is out of the exchange.
    this.session = new FramedSession(
      OuterMessage,
      {
        onMessage: (m) => {
          if (!this.expect.offer(m)) this.session.close();
        },
        onEnd: (error) => this.expect.fail(error),
      },
      timers,
    );
  }

  /** Connects and runs the exchange up to the point where the TV shows its code. */
  static async start(o: { host: string; port?: number; identity: ClientIdentity; clientName: string; serviceName?: string; timeoutMs?: number; timers: Timers }): Promise<AndroidTvPairing> {
    const pairing = new AndroidTvPairing(o.identity, o.timeoutMs ?? 10_000, o.timers);
    pairing.serverCertificatePem = await pairing.session.open({ host: o.host, port: o.port ?? ANDROID_TV_PAIRING_PORT, ...o.identity, timeoutMs: pairing.timeoutMs });
    try {
      await pairing.step({ pairingRequest: { serviceName: o.serviceName ?? 'atvremote', clientName: o.clientName } }, 'pairingRequestAck');
      await pairing.step({ options: { preferredRole: ROLE_INPUT, inputEncodings: [{ type: ENCODING_HEXADECIMAL, symbolLength: 6 }] } }, 'options');
      await pairing.step({ configuration: { clientRole: ROLE_INPUT, encoding: { type: ENCODING_HEXADECIMAL, symbolLength: 6 } } }, 'configurationAck');
    } catch (err) {
      pairing.session.close();
      throw err;
    }
    return pairing;
  }

  /**
   * Sends the secret for the code on the TV's screen. A code that cannot be the TV's (its first
   * byte does not match the secret) is refused here, `wrong_code`, and the pairing stays open
   * for another try; a code the TV refuses (BAD_SECRET) is `wrong_code` too, but the TV has ended
   * the exchange: start again.
   */
  async finish(code: string, timeoutMs = this.timeoutMs): Promise<{ serverCertificatePem: string }> {
    if (!/^[0-9A-Fa-f]{6}$/.test(code)) throw new AndroidTvError('wrong_code', 'the code is 6 hexadecimal digits');
    const secret = pairingSecret(new X509Certificate(this.identity.certificatePem), new X509Certificate(this.serverCertificatePem), code.toUpperCase());
    if (!codeChecks(secret, code)) throw new AndroidTvError('wrong_code', 'the code does not match the one the TV shows');
    await this.step({ secret: { secret } }, 'secretAck', timeoutMs);
    this.session.close();
    return { serverCertificatePem: this.serverCertificatePem };
  }

  cancel(): void {
    this.session.close();
  }

  private async step(message: Record<string, unknown>, answer: string, timeoutMs = this.timeoutMs): Promise<Record<string, unknown>> {
    const reply = this.expect.next(has(answer), timeoutMs, answer);
    this.session.send({ protocolVersion: PAIRING_PROTOCOL_VERSION, status: STATUS.OK, ...message });
    const got = await reply;
    if (got.status !== STATUS.OK) {
      this.session.close();
      if (got.status === STATUS.BAD_SECRET) throw new AndroidTvError('wrong_code', 'the TV refused the code');
      throw new AndroidTvError('rejected', `the TV answered status ${String(got.status)} to ${Object.keys(message)[0]}`);
    }
    return got;
  }
}
