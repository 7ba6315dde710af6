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
  /** What each version declares it runs on: Homebridge (its `engines`, else its `peerDependencies`, as Homebridge reads them) and Node. */
  requires?: Record<string, { homebridge?: string; node?: string }>;
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

/** A Node.js that runs a program (Homebridge) and builds its packages' native parts. */
export interface NodeRuntime {
  /** The `node` binary. */
  node: string;
  /** Its version, `v24.22.3`. */
  version: string;
  /** `hub`: the Node the hub runs on; `configured`: the admin's (ACCESSORY_HUB_NODE); `installed`: one the hub installed from the npm registry under DATA_DIR/runtimes. */
  source: 'hub' | 'configured' | 'installed';
  /** npm, run by this Node, so that what a package compiles at install time is built for the Node that will load it. */
  npm: { command: string; args: string[]; env: Record<string, string> };
}

/** Finds, or installs on first use, a Node that satisfies a program's `engines.node`. */
export interface NodeRuntimeProvider {
  /** `progress` sees the installer's output lines when one must be installed. Rejects with the reason when none can be had. */
  runtimeFor(range: string, progress?: (line: string) => void): Promise<NodeRuntime>;
}
