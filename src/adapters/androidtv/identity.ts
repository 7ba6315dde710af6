import { createHash, generateKeyPairSync, randomBytes, X509Certificate } from 'node:crypto';
import forge from 'node-forge';
import type { Clock } from '../../platform/clock.js';

/** The hub's TLS client identity for a TV: what the TV remembers once paired. */
export interface ClientIdentity {
  certificatePem: string;
  privateKeyPem: string;
}

/**
 * A self-signed RSA 2048 certificate, valid ten years from `clock`'s now. The key pair comes from
 * Node's crypto (native, fast); node-forge only writes the X.509 certificate, which Node cannot.
 */
export function generateClientIdentity(commonName: string, clock: Clock): ClientIdentity {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048, publicExponent: 65537 });
  const publicPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const privatePem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicPem);
  // A positive serial: the first byte's top bit clear.
  const serial = randomBytes(16);
  serial[0] = serial[0]! & 0x7f;
  cert.serialNumber = serial.toString('hex');
  const now = clock.now();
  cert.validity.notBefore = new Date(now - 24 * 3600 * 1000);
  cert.validity.notAfter = new Date(now + 10 * 365 * 24 * 3600 * 1000);
  const subject = [{ name: 'commonName', value: commonName.slice(0, 64) }, { name: 'organizationName', value: 'Home Control Service' }];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([{ name: 'basicConstraints', cA: false }]);
  cert.sign(forge.pki.privateKeyFromPem(privatePem), forge.md.sha256.create());
  return { certificatePem: forge.pki.certificateToPem(cert), privateKeyPem: privatePem };
}

/** The RSA modulus and exponent of a certificate's key, big-endian bytes without leading zeros. */
function rsaNumbers(certificate: X509Certificate): { n: Buffer; e: Buffer } {
  const jwk = certificate.publicKey.export({ format: 'jwk' });
  if (jwk.kty !== 'RSA' || typeof jwk.n !== 'string' || typeof jwk.e !== 'string') throw new Error('the certificate has no RSA key');
  return { n: Buffer.from(jwk.n, 'base64url'), e: Buffer.from(jwk.e, 'base64url') };
}

/**
 * The pairing secret for a code the TV shows (6 hex digits): SHA-256 over the client's modulus and
 * exponent, the TV's modulus and exponent, and the code's last two bytes. Its first byte equals
 * the code's first byte, which lets a mistyped code be caught before it is sent.
 */
export function pairingSecret(client: X509Certificate, server: X509Certificate, code: string): Buffer {
  const c = rsaNumbers(client);
  const s = rsaNumbers(server);
  return createHash('sha256').update(c.n).update(c.e).update(s.n).update(s.e).update(Buffer.from(code.slice(2), 'hex')).digest();
}

/** Whether a 6-hex-digit code is consistent with the secret it yields (its first byte). */
export function codeChecks(secret: Buffer, code: string): boolean {
  return secret[0] === Number.parseInt(code.slice(0, 2), 16);
}

/** SHA-256 fingerprint of a certificate, as the TV keeps its paired clients. */
export function fingerprintOf(pem: string): string {
  return new X509Certificate(pem).fingerprint256;
}
