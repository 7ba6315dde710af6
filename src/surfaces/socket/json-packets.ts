import { Decoder, Encoder, PacketType, type Packet } from 'socket.io-parser';
import { snapshotJson } from '../snapshot-json.js';

/** Payloads known to be plain JSON, with their JSON once it has been made. */
const plainJson = new WeakMap<object, string | undefined>();

/**
 * Marks a payload as plain JSON (no Buffers or typed arrays anywhere in it), made from domain
 * data that passed through schemas. Socket.IO then skips its search for binary attachments and
 * serialises the payload once, however many packets carry it: a hub command's answer goes out
 * as both `hub:response` and the acknowledgement.
 */
export function asPlainJson<T extends object>(payload: T): T {
  if (!plainJson.has(payload)) plainJson.set(payload, undefined);
  return payload;
}

function jsonOf(payload: object): string {
  let json = plainJson.get(payload);
  if (json === undefined) {
    json = snapshotJson(payload);
    plainJson.set(payload, json);
  }
  return json;
}

/**
 * The standard Socket.IO encoder (the wire format is unchanged) with a fast path for packets
 * whose last argument was marked with `asPlainJson`: the binary search walked the whole payload
 * on every emit, and each of the two packets of a hub answer serialised it again.
 */
class PlainJsonEncoder extends Encoder {
  override encode(packet: Packet): unknown[] {
    const args = packet.data as unknown;
    if ((packet.type !== PacketType.EVENT && packet.type !== PacketType.ACK) || !Array.isArray(args) || args.length === 0) return super.encode(packet);
    const last = args[args.length - 1] as unknown;
    if (typeof last !== 'object' || last === null || !plainJson.has(last)) return super.encode(packet);
    let text = String(packet.type);
    if (packet.nsp && packet.nsp !== '/') text += `${packet.nsp},`;
    if (packet.id !== undefined && packet.id !== null) text += String(packet.id);
    text += '[';
    for (let i = 0; i < args.length - 1; i++) text += `${JSON.stringify(args[i]) ?? 'null'},`;
    text += `${jsonOf(last)}]`;
    return [text];
  }
}

/** The `parser` option of the Socket.IO server. */
export const plainJsonParser = { Encoder: PlainJsonEncoder, Decoder };
