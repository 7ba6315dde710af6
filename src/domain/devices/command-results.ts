import { DomainError, errors, type FailureInfo } from '../../platform/errors.js';
import type { DeviceService } from './device-service.js';
import { GENERIC_IR, type DeviceActionResult } from './model.js';

/** Runs a device command and reports it as a result entry instead of throwing. */
export async function tryCommand(devices: DeviceService, deviceId: string, command: string, params: Record<string, unknown> = {}): Promise<DeviceActionResult> {
  try {
    const result = await devices.command(deviceId, command, params);
    return { deviceId, ok: true, command, ...(result === undefined ? {} : { result }) };
  } catch (err) {
    return { deviceId, ok: false, command, error: errorInfo(err) };
  }
}

export function errorInfo(err: unknown): FailureInfo {
  if (err instanceof DomainError) return { code: err.code, message: err.message };
  return errors.INTERNAL_ERROR.info();
}

/** The first of `names` the device offers (or the first name when it declares no commands). */
export function offeredCommand(devices: DeviceService, deviceId: string, names: string[]): string | undefined {
  const device = devices.registry.find(deviceId);
  if (!device) return undefined;
  if (device.commands.length === 0 && device.driverKey !== GENERIC_IR) return names[0];
  const offered = new Set(device.commands.map((c) => c.name));
  return names.find((n) => offered.has(n));
}
