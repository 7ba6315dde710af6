/** A device's last state as stored, to serve (unconfirmed) after a restart. */
export interface StoredState {
  deviceId: string;
  state: Record<string, unknown>;
  updatedAt: number;
}

/** Storage port of device state, written behind in batches. */
export interface StateRepository {
  loadAll(): Promise<StoredState[]>;
  saveMany(states: StoredState[]): Promise<void>;
}
