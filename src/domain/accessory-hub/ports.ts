/** One HAP characteristic as the accessory server reports it. */
export interface HapCharacteristic {
  iid: number;
  type: string;
  value?: unknown;
  perms?: string[];
  format?: string;
  description?: string;
  unit?: string;
  minValue?: number;
  maxValue?: number;
  minStep?: number;
  /** The values an enum characteristic allows (HAP's `valid-values`). */
  'valid-values'?: number[];
}

export interface HapAccessory {
  aid: number;
  services: Array<{ iid: number; type: string; primary?: boolean; characteristics: HapCharacteristic[] }>;
}

/** Homebridge's accessory server over HAP's HTTP API (insecure mode on loopback); the adapter implements it. */
export interface HapClient {
  accessories(port: number, pin: string): Promise<HapAccessory[]>;
  write(port: number, pin: string, writes: Array<{ aid: number; iid: number; value: unknown }>): Promise<void>;
  /** Asks for events of these characteristics; resolves once HAP accepted; `onClose` says the subscription ended (subscribe again). */
  subscribe(
    port: number,
    pin: string,
    ids: Array<{ aid: number; iid: number }>,
    onEvent: (changes: Array<{ aid: number; iid: number; value: unknown }>) => void,
    onClose: () => void,
  ): Promise<{ close(): void }>;
}

/** A package as the registry's search finds it. */
export interface RegistryHit {
  name: string;
  version: string;
  description?: string;
  keywords?: string[];
  date?: string;
  links?: Record<string, string>;
}

export interface PackageMetadata {
  name: string;
  description?: string;
  distTags: Record<string, string>;
  versions: string[];
  latest?: { version: string; engines?: Record<string, string>; keywords?: string[] };
}

/** The npm registry's search and metadata APIs (the adapter implements them over HTTP). */
export interface PluginRegistry {
  search(registry: string, text: string, size: number): Promise<RegistryHit[]>;
  /** Undefined when the registry has no such package. */
  metadata(registry: string, name: string): Promise<PackageMetadata | undefined>;
}

/** Finds a TCP port nothing listens on (the adapter binds to check: the domain opens no sockets). */
export interface FreePortFinder {
  /** `preferred` when it is free on every IPv4 interface, else a port the OS hands out. */
  freePort(preferred: number): Promise<number>;
}
