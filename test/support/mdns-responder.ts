import { createSocket } from 'node:dgram';
import makeMdns from 'multicast-dns';
import type { Answer } from 'dns-packet';

export interface MdnsTestService {
  /** e.g. `_googlecast._tcp` */
  type: string;
  instanceName: string;
  /** SRV target, e.g. `tv-1.local`. */
  host: string;
  port: number;
  addresses: string[];
  txt?: Record<string, string>;
}

export interface MdnsResponder {
  readonly address: '127.0.0.1';
  readonly port: number;
  /** Questions received, as `TYPE name`. */
  readonly questions: string[];
  setServices(services: MdnsTestService[]): void;
  close(): Promise<void>;
}

/**
 * An mDNS responder on 127.0.0.1 for tests: answers PTR questions for a service type with its
 * instances (and, unless `withholdAdditionals`, their SRV, TXT and A records as additionals), and
 * SRV, TXT and A questions directly, unicast to the asker (RFC 6762 §6.7, a one-shot query).
 * `silent` answers nothing.
 */
export async function startMdnsResponder(options: { services: MdnsTestService[]; withholdAdditionals?: boolean; silent?: boolean }): Promise<MdnsResponder> {
  let services = options.services;
  const questions: string[] = [];
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const mdns = makeMdns({ socket, multicast: false, bind: false, port: 0 });
  mdns.on('warning', () => undefined);
  const fqdn = (s: MdnsTestService) => `${s.instanceName.replace(/\./g, '\\.')}.${s.type}.local`;
  const srv = (s: MdnsTestService): Answer => ({ name: fqdn(s), type: 'SRV', ttl: 120, data: { port: s.port, target: s.host, priority: 0, weight: 0 } });
  const txt = (s: MdnsTestService): Answer => ({ name: fqdn(s), type: 'TXT', ttl: 120, data: Object.entries(s.txt ?? {}).map(([k, v]) => Buffer.from(`${k}=${v}`)) });
  const a = (s: MdnsTestService): Answer[] => s.addresses.map((address) => ({ name: s.host, type: 'A', ttl: 120, data: address }));
  mdns.on('query', (query, rinfo) => {
    const answers: Answer[] = [];
    const additionals: Answer[] = [];
    for (const q of query.questions) {
      questions.push(`${q.type} ${q.name}`);
      for (const s of services) {
        if (q.type === 'PTR' && q.name === `${s.type}.local`) {
          answers.push({ name: q.name, type: 'PTR', ttl: 120, data: fqdn(s) });
          if (!options.withholdAdditionals) additionals.push(srv(s), txt(s), ...a(s));
        } else if (q.type === 'SRV' && q.name === fqdn(s)) answers.push(srv(s));
        else if (q.type === 'TXT' && q.name === fqdn(s)) answers.push(txt(s));
        else if (q.type === 'A' && q.name === s.host) answers.push(...a(s));
      }
    }
    if (options.silent || answers.length === 0) return;
    mdns.respond({ answers, additionals }, { port: rinfo.port, address: rinfo.address } as never);
  });
  return {
    address: '127.0.0.1',
    port: socket.address().port,
    questions,
    setServices(next) {
      services = next;
    },
    close: () => new Promise<void>((resolve) => mdns.destroy(() => resolve())),
  };
}
