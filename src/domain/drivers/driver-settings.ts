/** Per-driver setup values (the manifest's `properties`), stored by driverKey. */
export interface DriverSettingsRepository {
  get(driverKey: string): Promise<Record<string, unknown> | undefined>;
  save(driverKey: string, values: Record<string, unknown>, at: number): Promise<void>;
}
