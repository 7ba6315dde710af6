import type { RequirementsStatus } from '../../platform/requirements.js';
/** A controller's fabric on the bridge: one per ecosystem it was paired with. */
export interface MatterFabric {
  fabricIndex: number;
  /** The label the controller gave it. */
  label: string;
  vendorId: number;
  /** The ecosystem, when the vendor id is a known one (Apple Home, Google Home, Amazon Alexa, SmartThings, Home Assistant). */
  ecosystem?: string;
}

export interface MatterBridgedDevice {
  deviceId: string;
  name: string;
  deviceClass: string;
  endpoint: number | null;
  /** The Matter device type (On/Off Light, Window Covering…). */
  deviceType: string;
}

export interface MatterRuntimeStatus {
  /** `starting`, `running`, `failed` (see `error`), `standby` (another instance of the cluster runs it, `holder`), `off`. */
  state: 'off' | 'starting' | 'running' | 'failed' | 'standby';
  error?: string;
  holder?: string;
  /** `process`: the bridge runs in a process of its own (the default); `hub`: in the hub's (MATTER_PROCESS=inline). */
  runsIn: 'process' | 'hub';
  /** matter.js, when the hub may have to install it (a home box installed with `npm ci --omit=dev`). */
  requirements?: RequirementsStatus;
  /** The bridge process, while it runs. */
  pid?: number;
  /** Times its process ended by itself and was restarted, since the hub started. */
  restarts: number;
  port: number;
  commissioned: boolean;
  fabrics: MatterFabric[];
  /** While the bridge can be paired: the codes to pair it with. */
  pairing?: { manualPairingCode: string; qrPairingCode: string };
  devices: MatterBridgedDevice[];
  /** Hub devices whose class has no Matter device type. */
  unmapped: Array<{ deviceId: string; name: string; deviceClass: string }>;
}

/** The Matter bridge as the domain sees it (src/adapters/matter implements it). */
export interface MatterRuntime {
  start(): Promise<void>;
  stop(): Promise<void>;
  status(): MatterRuntimeStatus;
  /** Lets another ecosystem pair (a new commissioning window, 15 minutes). */
  openCommissioningWindow(): Promise<void>;
  /** Unpairs one ecosystem. */
  removeFabric(fabricIndex: number): Promise<void>;
}
