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
}

export interface HapAccessory {
  aid: number;
  services: Array<{ iid: number; type: string; primary?: boolean; characteristics: HapCharacteristic[] }>;
}

/** Homebridge's accessory server over HAP's HTTP API (insecure mode on loopback); the adapter implements it. */
export interface HapClient {
  accessories(port: number, pin: string): Promise<HapAccessory[]>;
  write(port: number, pin: string, writes: Array<{ aid: number; iid: number; value: unknown }>): Promise<void>;
}
