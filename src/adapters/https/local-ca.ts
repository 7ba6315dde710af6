import { generateKeyPairSync, randomBytes, X509Certificate } from 'node:crypto';
import fs from 'node:fs/promises';
import net from 'node:net';
import type os from 'node:os';
import path from 'node:path';
import forge from 'node-forge';
import { writeFileAtomic } from '../../platform/atomic-file.js';
import type { LanIdentity, LocalCertificates, ServedCertificate } from './https-service.js';

const DAY_MS = 86_400_000;
/** The CA lives ten years: a phone that trusts it should not have to again. */
const CA_LIFETIME_MS = 3650 * DAY_MS;
/** Browsers refuse a server certificate valid for more than 398 days. */
const SERVER_LIFETIME_MS = 397 * DAY_MS;
/** Renewed when it has less than this left. */
const RENEW_BEFORE_MS = 30 * DAY_MS;

const FILES = { caKey: 'ca.key.pem', caCert: 'ca.cert.pem', serverKey: 'server.key.pem', serverCert: 'server.cert.pem' } as const;

/**
 * The hub's names and LAN addresses, which its certificate covers: the host name, `<name>.local`
 * (mDNS), `localhost`, and every address of its interfaces but IPv6 link-local ones (a browser
 * cannot use them in a URL without a zone), plus loopback.
 */
export function lanIdentity(hostname: string, interfaces: ReturnType<typeof os.networkInterfaces>, extraNames: readonly string[] = []): LanIdentity {
  const name = hostname.toLowerCase().replace(/\.local$/, '');
  const hostNames = new Set([name, `${name}.local`, 'localhost', ...extraNames.map((n) => n.toLowerCase())]);
  const addresses = new Set(['127.0.0.1', '::1']);
  for (const list of Object.values(interfaces)) {
    for (const a of list ?? []) {
      if (a.internal) continue;
      if (a.family === 'IPv6' && /^fe80:/i.test(a.address)) continue;
      addresses.add(a.address);
    }
  }
  return { hostNames: [...hostNames].filter((n) => n !== '' && n !== '.local').sort(), addresses: [...addresses].sort() };
}

/**
 * The hub's own certificate authority, in `dir` (DATA_DIR/tls, beside secret.key and, like it,
 * never in a backup): made at the first start, it signs the server certificate for the hub's
 * names and addresses. node-forge builds the certificates (no hand-written ASN.1); node:crypto
 * makes the RSA keys, which forge would take seconds for.
 */
export class LocalCa implements LocalCertificates {
  private ca: Promise<{ key: forge.pki.rsa.PrivateKey; cert: forge.pki.Certificate; pem: string }> | undefined;
  /** One issue at a time: two checks at once must not write two certificates. */
  private issuing: Promise<ServedCertificate> | undefined;

  constructor(
    private readonly dir: string,
    private readonly now: () => number,
  ) {}

  async caCertificatePem(): Promise<string> {
    return (await this.loadCa()).pem;
  }

  async renewalDue(identity: LanIdentity): Promise<boolean> {
    const current = await this.readServer();
    return current === undefined || this.due(current.certPem, identity);
  }

  serverCertificate(identity: LanIdentity): Promise<ServedCertificate> {
    this.issuing ??= this.issueIfDue(identity).finally(() => {
      this.issuing = undefined;
    });
    return this.issuing;
  }

  private async issueIfDue(identity: LanIdentity): Promise<ServedCertificate> {
    const ca = await this.loadCa();
    const current = await this.readServer();
    if (current && !this.due(current.certPem, identity) && new X509Certificate(current.certPem).checkIssued(new X509Certificate(ca.pem))) return current;
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const keyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const cert = forge.pki.createCertificate();
    cert.publicKey = forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }).toString());
    cert.serialNumber = serial();
    const start = this.now() - DAY_MS; // a phone whose clock runs behind still accepts it
    cert.validity.notBefore = new Date(start);
    cert.validity.notAfter = new Date(start + SERVER_LIFETIME_MS);
    const primary = identity.hostNames.find((n) => n.endsWith('.local')) ?? identity.hostNames[0] ?? 'localhost';
    cert.setSubject([{ name: 'commonName', value: primary }]);
    cert.setIssuer(ca.cert.subject.attributes);
    cert.setExtensions([
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', critical: true, digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [...identity.hostNames.map((value) => ({ type: 2, value })), ...identity.addresses.filter((a) => net.isIP(a) !== 0).map((ip) => ({ type: 7, ip }))] },
      { name: 'subjectKeyIdentifier' },
      { name: 'authorityKeyIdentifier', keyIdentifier: ca.cert.generateSubjectKeyIdentifier().getBytes() },
    ]);
    cert.sign(ca.key, forge.md.sha256.create());
    const certPem = forge.pki.certificateToPem(cert);
    await fs.mkdir(this.dir, { recursive: true, mode: 0o700 });
    await writeFileAtomic(path.join(this.dir, FILES.serverKey), keyPem, { mode: 0o600 });
    await writeFileAtomic(path.join(this.dir, FILES.serverCert), certPem);
    return { keyPem, certPem };
  }

  private due(certPem: string, identity: LanIdentity): boolean {
    const cert = new X509Certificate(certPem);
    if (Date.parse(cert.validTo) - this.now() < RENEW_BEFORE_MS) return true;
    const have = new Set((cert.subjectAltName ?? '').split(', ').map((e) => e.replace(/^(DNS|IP Address):/, '').toLowerCase()));
    const want = new Set([...identity.hostNames.map((n) => n.toLowerCase()), ...identity.addresses.map(normalizeIp)]);
    return have.size !== want.size || [...want].some((w) => !have.has(w));
  }

  private loadCa() {
    this.ca ??= this.readOrMakeCa().catch((err: unknown) => {
      this.ca = undefined;
      throw err;
    });
    return this.ca;
  }

  private async readOrMakeCa() {
    const keyFile = path.join(this.dir, FILES.caKey);
    const certFile = path.join(this.dir, FILES.caCert);
    const [keyPem, pem] = await Promise.all([fs.readFile(keyFile, 'utf8').catch(() => undefined), fs.readFile(certFile, 'utf8').catch(() => undefined)]);
    if (keyPem && pem) return { key: forge.pki.privateKeyFromPem(keyPem), cert: forge.pki.certificateFromPem(pem), pem };
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const newKeyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const cert = forge.pki.createCertificate();
    cert.publicKey = forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }).toString());
    cert.serialNumber = serial();
    const start = this.now() - DAY_MS;
    cert.validity.notBefore = new Date(start);
    cert.validity.notAfter = new Date(start + CA_LIFETIME_MS);
    // A name of its own per hub, so that a phone trusting two hubs tells them apart.
    const subject = [
      { name: 'commonName', value: `Home Control Service local CA (${randomBytes(4).toString('hex')})` },
      { name: 'organizationName', value: 'Home Control Service' },
    ];
    cert.setSubject(subject);
    cert.setIssuer(subject);
    cert.setExtensions([
      { name: 'basicConstraints', critical: true, cA: true, pathLenConstraint: 0 },
      { name: 'keyUsage', critical: true, keyCertSign: true, cRLSign: true },
      { name: 'subjectKeyIdentifier' },
    ]);
    const key = forge.pki.privateKeyFromPem(newKeyPem);
    cert.sign(key, forge.md.sha256.create());
    const newPem = forge.pki.certificateToPem(cert);
    await fs.mkdir(this.dir, { recursive: true, mode: 0o700 });
    await writeFileAtomic(keyFile, newKeyPem, { mode: 0o600 });
    await writeFileAtomic(certFile, newPem);
    return { key, cert, pem: newPem };
  }

  private async readServer(): Promise<ServedCertificate | undefined> {
    const [keyPem, certPem] = await Promise.all([
      fs.readFile(path.join(this.dir, FILES.serverKey), 'utf8').catch(() => undefined),
      fs.readFile(path.join(this.dir, FILES.serverCert), 'utf8').catch(() => undefined),
    ]);
    return keyPem && certPem ? { keyPem, certPem } : undefined;
  }
}

/**
 * A positive serial of 16 random bytes (RFC 5280: at most 20 octets, non-negative). Its first
 * byte is 0x01–0x7f: 0x80 and up would read as negative, and 0x00 would not be minimal DER, which
 * strict verifiers (Chrome's, Go's) refuse.
 */
function serial(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0]! & 0x7f) | 0x01;
  return bytes.toString('hex');
}

/** As node:crypto prints an IP in subjectAltName (IPv6 expanded, upper case). */
function normalizeIp(address: string): string {
  if (net.isIPv6(address)) {
    const socket = new net.SocketAddress({ address, family: 'ipv6' });
    return expandIpv6(socket.address).toLowerCase();
  }
  return address.toLowerCase();
}

function expandIpv6(address: string): string {
  const [head = '', tail = ''] = address.split('::');
  const h = head ? head.split(':') : [];
  const t = address.includes('::') ? (tail ? tail.split(':') : []) : [];
  const fill = address.includes('::') ? Array(8 - h.length - t.length).fill('0') : [];
  return [...h, ...fill, ...t].map((g) => g.padStart(4, '0').replace(/^0+(?=.)/, '')).join(':');
}
