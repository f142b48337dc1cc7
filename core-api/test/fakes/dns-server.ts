import { createSocket, type Socket } from 'node:dgram';
import type { AddressInfo } from 'node:net';
import dnsPacket from 'dns-packet';

/**
 * What the fake answers for a name: TXT records (each an array of character-strings, the way a zone splits
 * long values), or a failure mode. Names it has no entry for get NXDOMAIN.
 */
export type FakeDnsAnswer =
  | { txt: readonly (readonly string[])[] }
  | 'nodata'
  | 'nxdomain'
  | 'servfail'
  | 'refused'
  | 'no-reply';

export interface FakeDnsServer {
  /** `127.0.0.1:PORT`, ready for `Resolver#setServers`. */
  readonly address: string;
  readonly port: number;
  /** Names asked for, lowercase, in order (with the record type). */
  readonly queries: { name: string; type: string }[];
  set(name: string, answer: FakeDnsAnswer): void;
  clear(): void;
  close(): Promise<void>;
}

const RCODE = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3, REFUSED: 5 } as const;

/** A real DNS server over UDP on 127.0.0.1 (dns-packet wire format), so node's c-ares resolver runs unmodified. */
export async function startFakeDnsServer(initial: Record<string, FakeDnsAnswer> = {}): Promise<FakeDnsServer> {
  const answers = new Map<string, FakeDnsAnswer>();
  const set = (name: string, answer: FakeDnsAnswer) => answers.set(name.toLowerCase().replace(/\.$/, ''), answer);
  for (const [name, answer] of Object.entries(initial)) set(name, answer);
  const queries: { name: string; type: string }[] = [];
  const socket: Socket = createSocket('udp4');

  socket.on('message', (message, remote) => {
    let query: dnsPacket.DecodedPacket;
    try {
      query = dnsPacket.decode(message);
    } catch {
      return;
    }
    const question = query.questions?.[0];
    if (!question) return;
    const name = question.name.toLowerCase().replace(/\.$/, '');
    queries.push({ name, type: question.type });
    const answer = answers.get(name) ?? 'nxdomain';
    if (answer === 'no-reply') return;
    let rcode: number = RCODE.NOERROR;
    if (answer === 'nxdomain') rcode = RCODE.NXDOMAIN;
    if (answer === 'servfail') rcode = RCODE.SERVFAIL;
    if (answer === 'refused') rcode = RCODE.REFUSED;
    const records =
      typeof answer === 'object' && question.type === 'TXT'
        ? answer.txt.map((chunks) => ({
            type: 'TXT' as const,
            class: 'IN' as const,
            name: question.name,
            ttl: 60,
            data: chunks.map((chunk) => Buffer.from(chunk, 'utf8')),
          }))
        : [];
    const response = dnsPacket.encode({
      type: 'response',
      id: query.id ?? 0,
      flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | dnsPacket.AUTHORITATIVE_ANSWER | rcode,
      questions: [question],
      answers: records,
    });
    socket.send(response, remote.port, remote.address);
  });

  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, '127.0.0.1', () => {
      socket.off('error', reject);
      resolve();
    });
  });
  const { port } = socket.address() as AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    port,
    queries,
    set,
    clear: () => {
      answers.clear();
      queries.length = 0;
    },
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
