import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import type net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { lanIdentity, LocalCa } from '../src/adapters/https/local-ca.js';

/**
 * The hub's local CA, checked by what it did not write: node:crypto's X509Certificate reads the
 * certificates forge made, and a real TLS handshake on loopback trusts the CA and nothing else.
 */
const dirs: string[] = [];
const tempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hcs-ca-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

const DAY = 86_400_000;
const identity = { hostNames: ['myhub', 'myhub.local', 'localhost'], addresses: ['127.0.0.1', '::1', '192.168.1.20', 'fd00::20'] };

describe('the local CA', () => {
  it('issues a server certificate for the names and addresses, signed by a CA that is one', async () => {
    let now = Date.parse('2026-12-02T12:00:00Z');
    const dir = tempDir();
    const ca = new LocalCa(dir, () => now);
    const served = await ca.serverCertificate(identity);
    const caCert = new X509Certificate(await ca.caCertificatePem());
    const cert = new X509Certificate(served.certPem);
    expect(caCert.ca).toBe(true);
    expect(cert.ca).toBe(false);
    expect(cert.checkIssued(caCert)).toBe(true);
    expect(cert.verify(caCert.publicKey)).toBe(true);
    expect(cert.checkHost('myhub.local')).toBe('myhub.local');
    expect(cert.checkHost('other.local')).toBeUndefined();
    for (const ip of identity.addresses) expect(cert.checkIP(ip), ip).toBe(ip);
    expect(Date.parse(cert.validTo) - Date.parse(cert.validFrom)).toBeLessThanOrEqual(398 * DAY);
    expect(fs.statSync(path.join(dir, 'ca.key.pem')).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.join(dir, 'server.key.pem')).mode & 0o777).toBe(0o600);

    // The same names: the same certificate. An address more: a new one. Near its end: due.
    expect((await ca.serverCertificate(identity)).certPem).toBe(served.certPem);
    expect(await ca.renewalDue(identity)).toBe(false);
    const moved = { ...identity, addresses: [...identity.addresses, '10.0.0.7'] };
    expect(await ca.renewalDue(moved)).toBe(true);
    const renewed = await ca.serverCertificate(moved);
    expect(renewed.certPem).not.toBe(served.certPem);
    expect(new X509Certificate(renewed.certPem).checkIP('10.0.0.7')).toBe('10.0.0.7');
    now = Date.parse(new X509Certificate(renewed.certPem).validTo) - 10 * DAY;
    expect(await ca.renewalDue(moved)).toBe(true);
    // A hub restarted on the folder keeps its CA.
    expect(await new LocalCa(dir, () => now).caCertificatePem()).toBe(await ca.caCertificatePem());
  });

  it('makes one CA when asked five times at once', async () => {
    const dir = tempDir();
    const ca = new LocalCa(dir, () => Date.now());
    const pems = await Promise.all(Array.from({ length: 5 }, () => ca.serverCertificate(identity).then(() => ca.caCertificatePem())));
    expect(new Set(pems).size).toBe(1);
    expect(fs.readFileSync(path.join(dir, 'ca.cert.pem'), 'utf8')).toBe(pems[0]);
  });

  it('is trusted in a real TLS handshake by a client given the CA, and by no other', async () => {
    const ca = new LocalCa(tempDir(), () => Date.now());
    const served = await ca.serverCertificate(identity);
    const server = https.createServer({ key: served.keyPem, cert: served.certPem }, (_req, res) => res.end('ok'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    const get = (options: https.RequestOptions) =>
      new Promise<string>((resolve, reject) => {
        https.get({ host: '127.0.0.1', port, path: '/', ...options }, (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString()));
          res.on('end', () => resolve(body));
        }).on('error', reject);
      });
    try {
      expect(await get({ ca: await ca.caCertificatePem(), servername: 'myhub.local' })).toBe('ok');
      await expect(get({ servername: 'myhub.local' })).rejects.toThrow(/certificate/i);
      await expect(get({ ca: await ca.caCertificatePem(), servername: 'stranger.local' })).rejects.toThrow(/altnames|Hostname/i);
    } finally {
      server.close();
    }
  });

  it('names the hub, its .local name and its LAN addresses, not link-local ones', () => {
    const found = lanIdentity('MyHub', {
      lo: [{ address: '127.0.0.1', family: 'IPv4', internal: true, netmask: '255.0.0.0', mac: '00:00:00:00:00:00', cidr: '127.0.0.1/8' }],
      eth0: [
        { address: '192.168.1.20', family: 'IPv4', internal: false, netmask: '255.255.255.0', mac: '02:00:00:00:00:01', cidr: '192.168.1.20/24' },
        { address: 'fe80::1', family: 'IPv6', internal: false, netmask: 'ffff:ffff:ffff:ffff::', mac: '02:00:00:00:00:01', cidr: 'fe80::1/64', scopeid: 2 },
      ],
    });
    expect(found).toEqual({ hostNames: ['localhost', 'myhub', 'myhub.local'], addresses: ['127.0.0.1', '192.168.1.20', '::1'] });
  });
});
