/**
 * The media family's nouns: playback endpoints (what the hub found or was told about on the
 * network), the canonical player roster built from them and the devices, and the normalized
 * commands every player is driven with.
 */

/**
 * What an endpoint speaks:
 * - `roku`: Roku ECP (SSDP `roku:ecp`), controlled by the built-in Roku integration;
 * - `androidtv`: Android TV / Google TV, Android TV Remote v2 (mDNS `_androidtvremote2._tcp`),
 *   controlled once paired;
 * - `cast`: a Google Cast receiver (mDNS `_googlecast._tcp`) without the Remote v2 service;
 * - `dlna`: a UPnP MediaRenderer (SSDP `urn:schemas-upnp-org:device:MediaRenderer:1`);
 * - `bridge`: registered by another hub or an app, commanded through its callback URL.
 */
export type EndpointKind = 'roku' | 'androidtv' | 'cast' | 'dlna' | 'bridge';
export const ENDPOINT_KINDS = ['roku', 'androidtv', 'cast', 'dlna', 'bridge'] as const satisfies readonly EndpointKind[];

/** How the hub learnt of an endpoint. */
export type EndpointOrigin = 'ssdp' | 'mdns' | 'manual' | 'bridge';

/** A stored Android TV Remote v2 pairing: the hub's client identity the TV accepted. */
export interface CastPairing {
  certificatePem: string;
  privateKeyPem: string;
  /** The TV's certificate as it presented it when paired. */
  serverCertificatePem: string;
  pairedAt: number;
}

/** A bridge endpoint's commanding details. */
export interface BridgeTarget {
  callbackUrl: string;
  /** Normalized commands the registrant says the endpoint takes. */
  commands: NormalizedCommand[];
  /** Sent as `Authorization: Bearer` with every forwarded command, when given. */
  callbackToken?: string;
  timeoutMs: number;
  /** Whether it plays a URL it is sent (`play_url`): music services can start playback on it. */
  playsUrls: boolean;
  /** Who registered it (the principal's user id or token subject). */
  registeredBy: string | null;
}

/**
 * A playback endpoint. `id` is `<kind>:<key>`, the key being what the device itself says is its
 * identity (Roku serial number, cast `id` TXT record, UPnP UDN, the registrant's id), so it stays
 * the same when the device's address or name changes and across restarts.
 */
export interface MediaEndpoint {
  id: string;
  kind: EndpointKind;
  /** The device's own name, as discovery or the registrant gave it. */
  name: string;
  /** The owner's name for it; wins over `name` in the roster. */
  label: string | null;
  /** A disabled endpoint leaves the roster and is not controlled. */
  enabled: boolean;
  origin: EndpointOrigin;
  host: string;
  port: number;
  model: string | null;
  /** Discovery details: the SSDP headers or TXT records worth keeping (model, location, …). */
  details: Record<string, string>;
  /** Epoch ms of the last discovery answer (or registration); null when never seen. */
  lastSeenAt: number | null;
  /** Whether the last discovery that looked for its kind found it. */
  present: boolean;
  pairing: CastPairing | null;
  bridge: BridgeTarget | null;
  createdAt: number;
  updatedAt: number;
}

/** An endpoint as the API shows it: secrets (keys, tokens) stay in the hub. */
export type EndpointView = Omit<MediaEndpoint, 'pairing' | 'bridge'> & {
  paired: boolean;
  pairedAt: number | null;
  bridge: Omit<BridgeTarget, 'callbackToken'> | null;
  /** The logical device that stands for it, when a built-in integration controls it. */
  deviceId: string | null;
};

/** One endpoint a discovery round saw. */
export interface DiscoveredEndpoint {
  kind: Exclude<EndpointKind, 'bridge'>;
  /** Device identity within its kind; the endpoint id is `<kind>:<key>`. */
  key: string;
  name: string;
  host: string;
  port: number;
  model: string | null;
  origin: 'ssdp' | 'mdns' | 'manual';
  details: Record<string, string>;
}

/** The normalized player commands, one documented set whatever the target speaks. */
export const NORMALIZED_COMMANDS = [
  'play',
  'pause',
  'toggle',
  'stop',
  'next',
  'previous',
  'seek',
  'volume_set',
  'volume_step',
  'mute',
  'shuffle',
  'repeat',
  'power_on',
  'power_off',
  'launch_app',
  'select_source',
] as const;
export type NormalizedCommand = (typeof NORMALIZED_COMMANDS)[number];

/** What is playing, as far as the target tells. */
export interface NowPlaying {
  playback: string | null;
  app: string | null;
  appId: string | null;
  title: string | null;
  artist: string | null;
  album: string | null;
  positionSeconds: number | null;
  durationSeconds: number | null;
}

export type PlayerKind = 'device' | EndpointKind;

/** One playable target of the canonical roster. */
export interface MediaPlayer {
  /** The logical device's id when a device stands for it, else the endpoint's id. */
  id: string;
  name: string;
  kind: PlayerKind;
  deviceId: string | null;
  endpointId: string | null;
  driverKey: string | null;
  room: string;
  roomId: string | null;
  capabilities: NormalizedCommand[];
  online: boolean;
  status: 'online' | 'offline';
  statusSource: 'runtime' | 'unknown';
  power: 'on' | 'off' | null;
  volume: number | null;
  muted: boolean | null;
  nowPlaying: NowPlaying | null;
}
