import fs from 'node:fs/promises';
import type http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import tls from 'node:tls';
import { X509Certificate } from 'node:crypto';
import type { HttpsConfig } from '../../config.js';
import type { TimerHandle, Timers } from '../../platform/clock.js';
import type { ModuleLog } from '../../platform/module.js';
import { portHolder } from '../../platform/port-holder.js';

/** How often the certificate is looked at: renewal, changed LAN addresses, changed files. */
export const HTTPS_CHECK_MS = 10 * 60_000;
/** With TLS_CERT_FILE/TLS_KEY_FILE, how often their modification times are compared (a cheap stat). */
export const TLS_FILES_POLL_MS = 30_000;

/** A certificate and its key as the HTTPS server serves them. */
export interface ServedCertificate {
  keyPem: string;
  certPem: string;
}

/** Where the local CA's certificates come from (src/platform/local-ca.ts): the hub's own CA. */
export interface LocalCertificates {
  /** The server certificate for these names and addresses: the one on disk while it is good, else a new one. */
  serverCertificate(identity: LanIdentity): Promise<ServedCertificate>;
  /** True when the certificate on disk must be replaced (expiring, or other names or addresses). */
  renewalDue(identity: LanIdentity): Promise<boolean>;
  caCertificatePem(): Promise<string>;
}

export interface LanIdentity {
  hostNames: string[];
  addresses: string[];
}

export interface CertificateView {
  source: 'local-ca' | 'files';
  subject: string;
  issuer: string;
  notAfter: number;
  names: string[];
  fingerprint256: string;
}

export interface HttpsStatus {
  state: 'off' | 'starting' | 'serving' | 'failed';
  port: number | null;
  lastError?: string;
  certificate?: CertificateView;
  /** The local CA's fingerprint (SHA-256), to compare with what a phone shows when it installs it. */
  caFingerprint256?: string;
}

export interface HttpsServiceDeps {
  config: HttpsConfig;
  host: string;
  timers: Timers;
  log: ModuleLog;
  /** The hub's names and LAN addresses now (lanIdentity of os.hostname() and os.networkInterfaces()). */
  identity: () => LanIdentity;
  /** The hub's own CA (undefined only where the admin's files are used). */
  localCa: LocalCertificates;
}

/**
 * HTTPS beside HTTP: a TLS server on HTTPS_PORT that hands every request and upgrade to the same
 * Fastify server HTTP serves, so every route, stream and socket answers on both. Its certificate
 * is the local CA's for the hub's names and LAN addresses (renewed before it expires and when
 * the addresses change), or the admin's own files (reloaded when they change). A port that
 * another program holds is a failed status naming it; HTTP goes on regardless.
 */
export class HttpsService {
  private server: https.Server | undefined;
  private status_: HttpsStatus;
  private checkTimer: TimerHandle | null = null;
  private filesTimer: TimerHandle | null = null;
  private filesStamp = '';
  private identityKey = '';
  private stopped = false;

  constructor(private readonly deps: HttpsServiceDeps) {
    this.status_ = { state: deps.config.port === undefined ? 'off' : 'starting', port: deps.config.port ?? null };
  }

  status(): HttpsStatus {
    return this.status_;
  }

  /** The port it listens on, once it serves. */
  get port(): number | undefined {
    const address = this.server?.address() as AddressInfo | null | undefined;
    return address?.port;
  }

  async caCertificatePem(): Promise<string> {
    return this.deps.localCa.caCertificatePem();
  }

  /** Starts serving `target`'s routes over TLS. Never throws: a failure is the status. */
  async serve(target: http.Server): Promise<void> {
    const { config, log } = this.deps;
    if (config.port === undefined || this.stopped) return;
    let served: ServedCertificate;
    try {
      served = await this.certificate();
    } catch (err) {
      return this.fail(`no certificate: ${messageOf(err)}`);
    }
    const server = https.createServer({ key: served.keyPem, cert: served.certPem });
    server.keepAliveTimeout = target.keepAliveTimeout;
    server.requestTimeout = 0;
    server.on('request', (request: http.IncomingMessage, response: http.ServerResponse) => target.emit('request', request, response));
    server.on('upgrade', (request: http.IncomingMessage, socket: unknown, head: Buffer) => target.emit('upgrade', request, socket, head));
    // A client that fails the handshake (an untrusted CA, a port scan) is no error of the hub's.
    server.on('tlsClientError', () => undefined);
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen({ port: config.port, host: this.deps.host }, () => {
          server.off('error', reject);
          resolve();
        });
      });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EADDRINUSE') {
        const holder = await portHolder(config.port).catch(() => undefined);
        return this.fail(`port ${config.port} is held by ${holder ? `${holder.command} (pid ${holder.pid})` : 'another program'}; HTTPS is off, HTTP goes on`);
      }
      return this.fail(`cannot listen on port ${config.port}: ${messageOf(err)}`);
    }
    if (this.stopped) {
      server.close();
      return;
    }
    this.server = server;
    this.setServing(served);
    log.info({ port: this.port, source: this.status_.certificate?.source }, 'HTTPS serving');
    this.schedule();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.deps.timers.clearTimeout(this.checkTimer ?? undefined);
    this.deps.timers.clearTimeout(this.filesTimer ?? undefined);
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Looks at the certificate now: what the timers do (exposed for tests, which inject the clock). */
  async check(): Promise<void> {
    if (!this.server) return;
    const { config } = this.deps;
    try {
      if (config.certFile && config.keyFile) {
        const stamp = await this.filesStampNow();
        if (stamp === this.filesStamp) return;
        await this.reload(await this.certificate(), 'the certificate files changed');
        return;
      }
      const identity = this.deps.identity();
      const changed = identityKeyOf(identity) !== this.identityKey;
      if (changed || (await this.deps.localCa.renewalDue(identity))) await this.reload(await this.certificate(), changed ? 'the hub\'s names or addresses changed' : 'the certificate is due for renewal');
    } catch (err) {
      // The served certificate stays; the status says why the new one is not.
      this.status_ = { ...this.status_, lastError: `the certificate was not replaced: ${messageOf(err)}` };
      this.deps.log.warn({ err: messageOf(err) }, 'HTTPS: the certificate was not replaced');
    }
  }

  private async certificate(): Promise<ServedCertificate> {
    const { config } = this.deps;
    if (config.certFile && config.keyFile) {
      const stamp = await this.filesStampNow();
      const [certPem, keyPem] = await Promise.all([fs.readFile(config.certFile, 'utf8'), fs.readFile(config.keyFile, 'utf8')]);
      // Refused here rather than by the server: a key that does not match keeps the old pair.
      tls.createSecureContext({ key: keyPem, cert: certPem });
      this.filesStamp = stamp;
      return { certPem, keyPem };
    }
    const identity = this.deps.identity();
    const served = await this.deps.localCa.serverCertificate(identity);
    this.identityKey = identityKeyOf(identity);
    return served;
  }

  private async reload(served: ServedCertificate, why: string): Promise<void> {
    this.server?.setSecureContext({ key: served.keyPem, cert: served.certPem });
    this.setServing(served);
    this.deps.log.info({ why, notAfter: new Date(this.status_.certificate?.notAfter ?? 0).toISOString() }, 'HTTPS: certificate replaced');
  }

  private setServing(served: ServedCertificate): void {
    const cert = new X509Certificate(served.certPem);
    const names = (cert.subjectAltName ?? '').split(', ').map((entry) => entry.replace(/^(DNS|IP Address):/, '')).filter(Boolean);
    this.status_ = {
      state: 'serving',
      port: this.port ?? this.deps.config.port ?? null,
      certificate: {
        source: this.deps.config.certFile ? 'files' : 'local-ca',
        subject: cert.subject,
        issuer: cert.issuer,
        notAfter: Date.parse(cert.validTo),
        names,
        fingerprint256: cert.fingerprint256,
      },
    };
    if (!this.deps.config.certFile) {
      void this.deps.localCa
        .caCertificatePem()
        .then((pem) => {
          if (this.status_.state === 'serving') this.status_ = { ...this.status_, caFingerprint256: new X509Certificate(pem).fingerprint256 };
        })
        .catch(() => undefined);
    }
  }

  private schedule(): void {
    const { timers, config } = this.deps;
    const every = (ms: number, set: (t: TimerHandle) => void) => {
      const tick = () => {
        if (this.stopped) return;
        void this.check().finally(() => {
          if (!this.stopped) set(timers.setTimeout(tick, ms));
        });
      };
      set(timers.setTimeout(tick, ms));
    };
    if (config.certFile) every(TLS_FILES_POLL_MS, (t) => (this.filesTimer = t));
    else every(HTTPS_CHECK_MS, (t) => (this.checkTimer = t));
  }

  private async filesStampNow(): Promise<string> {
    const { certFile, keyFile } = this.deps.config;
    const [c, k] = await Promise.all([fs.stat(certFile!), fs.stat(keyFile!)]);
    return `${c.mtimeMs}:${c.size}:${k.mtimeMs}:${k.size}`;
  }

  private fail(message: string): void {
    this.status_ = { state: 'failed', port: this.deps.config.port ?? null, lastError: message };
    this.deps.log.warn({ port: this.deps.config.port }, `HTTPS: ${message}`);
  }
}

function identityKeyOf(identity: LanIdentity): string {
  return [...identity.hostNames.map((n) => n.toLowerCase()), ...identity.addresses].sort().join(',');
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
