/** What the MQTT adapter (src/adapters/mqtt) reports of itself: the link, the embedded broker, discovery and exposure. */
export interface MqttRuntimeStatus {
  mode: 'external' | 'embedded';
  /** The broker, without credentials. */
  broker: string;
  /** `active`: this instance holds the MQTT link; `standby`: another instance of the cluster does (`holder`). */
  role: 'active' | 'standby';
  holder?: string;
  connection: {
    connected: boolean;
    since: number | null;
    reconnects: number;
    lastError?: string;
    nextAttemptAt?: number;
  };
  embedded?: { port: number; clients: number; error?: string };
  discovery: {
    prefix: string;
    devices: number;
    entities: number;
    buttons: number;
    disabled: number;
    messages: number;
    dropped: number;
    unreadable: number;
    physicalDevices: Array<{ key: string; name?: string; manufacturer?: string; model?: string; entities: string[] }>;
  };
  rejected: Array<{ topic: string; reason: string; at: number }>;
  exposure: { enabled: boolean; baseTopic: string; devices: number };
}

/** The MQTT link as the domain sees it: started and stopped with the module, asked how it is doing. */
export interface MqttRuntime {
  start(): Promise<void>;
  stop(): Promise<void>;
  status(): MqttRuntimeStatus;
}
