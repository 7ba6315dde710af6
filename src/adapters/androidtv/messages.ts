import protobuf from 'protobufjs';

/**
 * The Android TV Remote v2 wire messages, as protobufjs reflection (no .proto files read at run
 * time: the service is bundled). Field numbers follow the AOSP `polo.proto` (pairing, proto2; its
 * OuterMessage as the TVs speak it) and `remotemessage.proto` (the remote channel, proto3) that
 * androidtvremote2 and androidtv-remote use; only the messages the hub exchanges are defined, and
 * protobuf skips the fields it does not know.
 */
const root = protobuf.Root.fromJSON({
  nested: {
    polo: {
      nested: {
        OuterMessage: {
          fields: {
            protocolVersion: { type: 'uint32', id: 1 },
            status: { type: 'uint32', id: 2 },
            pairingRequest: { type: 'PairingRequest', id: 10 },
            pairingRequestAck: { type: 'PairingRequestAck', id: 11 },
            options: { type: 'Options', id: 20 },
            configuration: { type: 'Configuration', id: 30 },
            configurationAck: { type: 'ConfigurationAck', id: 31 },
            secret: { type: 'Secret', id: 40 },
            secretAck: { type: 'Secret', id: 41 },
          },
        },
        PairingRequest: { fields: { serviceName: { type: 'string', id: 1 }, clientName: { type: 'string', id: 2 } } },
        PairingRequestAck: { fields: { serverName: { type: 'string', id: 1 } } },
        Encoding: { fields: { type: { type: 'uint32', id: 1 }, symbolLength: { type: 'uint32', id: 2 } } },
        Options: {
          fields: {
            inputEncodings: { rule: 'repeated', type: 'Encoding', id: 1 },
            outputEncodings: { rule: 'repeated', type: 'Encoding', id: 2 },
            preferredRole: { type: 'uint32', id: 3 },
          },
        },
        Configuration: { fields: { encoding: { type: 'Encoding', id: 1 }, clientRole: { type: 'uint32', id: 2 } } },
        ConfigurationAck: { fields: {} },
        Secret: { fields: { secret: { type: 'bytes', id: 1 } } },
      },
    },
    remote: {
      nested: {
        RemoteMessage: {
          fields: {
            remoteConfigure: { type: 'RemoteConfigure', id: 1 },
            remoteSetActive: { type: 'RemoteSetActive', id: 2 },
            remoteError: { type: 'RemoteError', id: 3 },
            remotePingRequest: { type: 'RemotePingRequest', id: 8 },
            remotePingResponse: { type: 'RemotePingResponse', id: 9 },
            remoteKeyInject: { type: 'RemoteKeyInject', id: 10 },
            remoteImeKeyInject: { type: 'RemoteImeKeyInject', id: 20 },
            remoteStart: { type: 'RemoteStart', id: 40 },
            remoteSetVolumeLevel: { type: 'RemoteSetVolumeLevel', id: 50 },
            remoteAppLinkLaunchRequest: { type: 'RemoteAppLinkLaunchRequest', id: 90 },
          },
        },
        RemoteDeviceInfo: {
          fields: {
            model: { type: 'string', id: 1 },
            vendor: { type: 'string', id: 2 },
            unknown1: { type: 'int32', id: 3 },
            unknown2: { type: 'string', id: 4 },
            packageName: { type: 'string', id: 5 },
            appVersion: { type: 'string', id: 6 },
          },
        },
        RemoteConfigure: { fields: { code1: { type: 'int32', id: 1 }, deviceInfo: { type: 'RemoteDeviceInfo', id: 2 } } },
        RemoteSetActive: { fields: { active: { type: 'int32', id: 1 } } },
        RemoteError: { fields: { value: { type: 'bool', id: 1 } } },
        RemotePingRequest: { fields: { val1: { type: 'int32', id: 1 }, val2: { type: 'int32', id: 2 } } },
        RemotePingResponse: { fields: { val1: { type: 'int32', id: 1 } } },
        RemoteKeyInject: { fields: { keyCode: { type: 'int32', id: 1 }, direction: { type: 'int32', id: 2 } } },
        RemoteAppInfo: { fields: { label: { type: 'string', id: 10 }, appPackage: { type: 'string', id: 12 } } },
        RemoteImeKeyInject: { fields: { appInfo: { type: 'RemoteAppInfo', id: 1 } } },
        RemoteStart: { fields: { started: { type: 'bool', id: 1 } } },
        RemoteSetVolumeLevel: {
          fields: {
            playerModel: { type: 'string', id: 3 },
            volumeMax: { type: 'uint32', id: 6 },
            volumeLevel: { type: 'uint32', id: 7 },
            volumeMuted: { type: 'bool', id: 8 },
          },
        },
        RemoteAppLinkLaunchRequest: { fields: { appLink: { type: 'string', id: 1 } } },
      },
    },
  },
});

export const OuterMessage = root.lookupType('polo.OuterMessage');
export const RemoteMessage = root.lookupType('remote.RemoteMessage');

/** Pairing statuses (polo.proto OuterMessage.Status). */
export const STATUS = { OK: 200, ERROR: 400, BAD_CONFIGURATION: 401, BAD_SECRET: 402 } as const;
export const ENCODING_HEXADECIMAL = 3;
export const ROLE_INPUT = 1;
export const PAIRING_PROTOCOL_VERSION = 2;

/** Remote feature flags (RemoteConfigure.code1, RemoteSetActive.active). */
export const FEATURES = { PING: 1, KEY: 2, IME: 4, POWER: 32, VOLUME: 64, APP_LINK: 512 } as const;
export const CLIENT_FEATURES = FEATURES.PING | FEATURES.KEY | FEATURES.IME | FEATURES.POWER | FEATURES.VOLUME | FEATURES.APP_LINK;

export const DIRECTION = { START_LONG: 1, END_LONG: 2, SHORT: 3 } as const;
export type KeyDirection = keyof typeof DIRECTION;

/** Android KeyEvent codes the hub sends (remotemessage.proto RemoteKeyCode). */
export const ANDROID_TV_KEYS = {
  HOME: 3,
  BACK: 4,
  DPAD_UP: 19,
  DPAD_DOWN: 20,
  DPAD_LEFT: 21,
  DPAD_RIGHT: 22,
  DPAD_CENTER: 23,
  VOLUME_UP: 24,
  VOLUME_DOWN: 25,
  POWER: 26,
  MENU: 82,
  SEARCH: 84,
  MEDIA_PLAY_PAUSE: 85,
  MEDIA_STOP: 86,
  MEDIA_NEXT: 87,
  MEDIA_PREVIOUS: 88,
  MEDIA_REWIND: 89,
  MEDIA_FAST_FORWARD: 90,
  MEDIA_PLAY: 126,
  MEDIA_PAUSE: 127,
  VOLUME_MUTE: 164,
  INFO: 165,
  CHANNEL_UP: 166,
  CHANNEL_DOWN: 167,
  TV_INPUT: 178,
  SETTINGS: 176,
  TV_INPUT_HDMI_1: 243,
  TV_INPUT_HDMI_2: 244,
  TV_INPUT_HDMI_3: 245,
  TV_INPUT_HDMI_4: 246,
} as const;
export type AndroidTvKey = keyof typeof ANDROID_TV_KEYS;

/** The most a frame may hold: a TV's messages are small; a flood closes the session. */
export const MAX_FRAME_BYTES = 64 * 1024;

/** A message with its varint length in front. */
export function frame(type: protobuf.Type, message: Record<string, unknown>): Buffer {
  const body = type.encode(type.fromObject(message)).finish();
  const writer = protobuf.Writer.create();
  writer.uint32(body.length);
  return Buffer.concat([writer.finish(), body]);
}

/**
 * Splits a byte stream into length-prefixed frames. `push` returns the complete frames so far,
 * or throws when a length is over the bound (or its varint longer than 5 bytes).
 */
export class FrameReader {
  private buffer: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): Buffer[] {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    const frames: Buffer[] = [];
    for (;;) {
      let length = 0;
      let shift = 0;
      let pos = 0;
      let complete = false;
      while (pos < this.buffer.length && pos < 5) {
        const byte = this.buffer[pos++]!;
        length |= (byte & 0x7f) << shift;
        shift += 7;
        if ((byte & 0x80) === 0) {
          complete = true;
          break;
        }
      }
      if (!complete) {
        if (pos >= 5) throw new Error('frame length is not a varint of at most 5 bytes');
        break;
      }
      if (length < 0 || length > MAX_FRAME_BYTES) throw new Error(`frame of ${length} bytes is over the ${MAX_FRAME_BYTES}-byte bound`);
      if (this.buffer.length < pos + length) {
        if (this.buffer.length > MAX_FRAME_BYTES + 5) throw new Error('frame over the bound');
        break;
      }
      frames.push(this.buffer.subarray(pos, pos + length));
      this.buffer = this.buffer.subarray(pos + length);
    }
    return frames;
  }
}
