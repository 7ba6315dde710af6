import { EventBus, type EventBusLogger } from '../platform/event-bus.js';
import type { DeviceActionResult, LogicalDevice } from './devices/model.js';
import type { ActionMap, Alert, Macro, Space, Zone, ZoneGroup } from './home/model.js';
import type { LocalPlayerState } from './music/model.js';
import type { Program, ProgramRun } from './programs/model.js';
import type { TriggerData } from './programs/automation-model.js';

/**
 * Every domain change, by name, with its payload. Streams (SSE, Socket.IO, hub protocol
 * events) subscribe to these; the domain publishes them and knows nothing of who listens.
 */
export interface DomainEvents {
  'auth.logged_in': { userId: string; username: string; clientAddress: string; at: number };
  'auth.login_failed': { username: string; clientAddress: string; at: number };
  'auth.logged_out': { userId: string; username: string; at: number };
  /** Accounts: other modules that keep per-user records (access grants, player assignments) let go on `user.removed`. */
  'user.created': { userId: string; username: string; role: 'admin' | 'user'; at: number };
  'user.updated': { userId: string; username: string; role: 'admin' | 'user'; disabled: boolean; mustChangePassword: boolean; at: number };
  'user.removed': { userId: string; username: string; at: number };
  'device.discovered': { device: LogicalDevice; at: number };
  'device.updated': { device: LogicalDevice; at: number };
  'device.removed': { deviceId: string; at: number };
  /** `state` is the full merged state; `changed` the partial update that caused it. */
  'device.state_changed': { deviceId: string; state: Record<string, unknown>; changed: Record<string, unknown>; at: number };
  'device.online_changed': { deviceId: string; online: boolean; at: number };
  'device.metrics': { deviceId: string; metrics: Record<string, unknown>; at: number };
  /** A button was pressed (BUTTON_PRESSED from its driver, a HomeKit programmable switch, an MQTT trigger). */
  'device.button_pressed': { deviceId: string; press: 'single' | 'double' | 'long'; at: number };
  'device.command_timed_out': { deviceId: string; command: string; timeoutMs: number; at: number };
  'device.command_executed': { deviceId: string; command: string; ok: boolean; durationMs: number; at: number };
  /** `actionTimeoutMs`: the link's own time-out for actions, when it has one (a local driver's manifest). */
  'driver.connected': { driverKey: string; instanceId: string; transport: string; actionTimeoutMs?: number; remoteAddress?: string; at: number };
  'driver.disconnected': { driverKey: string; instanceId: string; reason: string; at: number };
  'space.created': { space: Space; at: number };
  'space.updated': { space: Space; at: number };
  'space.removed': { spaceId: string; at: number };
  'space.devices_assigned': { spaceId: string; deviceIds: string[]; mode: 'add' | 'replace'; at: number };
  'space.source_activated': { spaceId: string; sourceId: string; deviceId: string; at: number };
  'zone.created': { zone: Zone; at: number };
  'zone.updated': { zone: Zone; at: number };
  'zone.removed': { zoneId: string; at: number };
  'zone.volume_changed': { zoneId: string; results: DeviceActionResult[]; at: number };
  'zone_group.created': { group: ZoneGroup; at: number };
  'zone_group.updated': { group: ZoneGroup; at: number };
  'zone_group.removed': { groupId: string; at: number };
  'macro.created': { macro: Macro; at: number };
  'macro.updated': { macro: Macro; at: number };
  'macro.removed': { macroId: string; at: number };
  'macro.run_started': { macroId: string; at: number };
  'macro.run_finished': { macroId: string; ok: boolean; at: number };
  'action_map.created': { actionMap: ActionMap; at: number };
  'action_map.updated': { actionMap: ActionMap; at: number };
  'action_map.removed': { actionMapId: string; at: number };
  'action_map.triggered': { actionMapId: string; ok: boolean; at: number };
  'program.created': { program: Program; at: number };
  'program.updated': { program: Program; at: number };
  'program.removed': { programId: string; at: number };
  'program.run_started': { run: ProgramRun; at: number };
  'program.run_finished': { run: ProgramRun; at: number };
  'program.lighting_off': { programId: string; results: DeviceActionResult[]; at: number };
  'program_semantics.updated': { programId: string; semantics: string[]; at: number };
  /** An automation's trigger fired (before its conditions are evaluated); `trigger` says which and with what. */
  'automation.triggered': { programId: string; trigger: TriggerData; at: number };
  /** A run of an automation ended, or an evaluation ended without one (skipped, not_passed): its trace. */
  'automation.finished': { programId: string; run: ProgramRun; at: number };
  'alert.submitted': { alert: Alert; at: number };
  'design.published': { design: unknown; at: number };
  'preferences.updated': { preferences: unknown; at: number };
  /** The home's name, location, time zone or units changed (the sun triggers are armed again). */
  'home.settings_updated': { settings: unknown; at: number };
  /** Remote pairing: the code is for the hub's screens (hub:event reaches only household sockets), never for the remote. */
  'remote.pairing_requested': { requestId: string; name: string; kind: string | null; code: string; clientAddress: string; expiresAt: string; at: number };
  'remote.pairing_updated': { requestId: string; status: 'paired' | 'rejected' | 'expired'; reason?: string; remoteId?: string; by: 'code' | 'household' | 'attempts' | 'expiry'; at: number };
  'remote.revoked': { remoteId: string; name: string; at: number };
  'remote.key_pressed': { remoteId: string; key: string; ok: boolean; at: number };
  /** Media endpoints: one found (or registered) for the first time, one edited or paired. */
  'media.endpoint_discovered': { endpointId: string; kind: string; at: number };
  'media.endpoint_updated': { endpointId: string; enabled: boolean; at: number };
  'media.cast_pairing': { endpointId: string; status: 'started' | 'paired' | 'failed' | 'cancelled'; reason?: string; at: number };
  /** The local media controller (MPD) changed: playback, song, volume, options, queue, or its connection. */
  'media_controller.state_changed': { state: LocalPlayerState; at: number };
  /** An accessory hub plugin install or uninstall: each output line of npm (`line`), then its outcome (`outcome`). */
  'accessory_hub.plugin_progress': { pluginId: string; action: 'install' | 'uninstall'; line?: string; outcome?: 'succeeded' | 'failed'; error?: string; at: number };
  /** Apple Home through the accessory hub: shown or not, or a different choice of devices. */
  'accessory_hub.homekit_changed': { exposed: boolean; at: number };
  /** The assistant: `status`, `progress`, `token`, `action`, `answer`, `error`; `userId` is the prompt's author (null for everyone). */
  'ai.event': { type: string; requestId: string | null; userId: string | null; data: unknown; at: number };
  'ir.transmitted': { deviceId: string | null; key: string | null; host: string; freqKhz: number; raw: number[]; line: string; at: number };
}

export type DomainEventBus = EventBus<DomainEvents>;

/**
 * Events after which a token that authenticated before may not any more (an account disabled,
 * demoted, given a new password or removed; a token logged out; a remote revoked): live
 * connections admitted with a token re-check it on these and close when it fails.
 */
export const CREDENTIALS_CHANGED = ['user.updated', 'user.removed', 'auth.logged_out', 'remote.revoked'] as const satisfies ReadonlyArray<keyof DomainEvents>;

export function createDomainEventBus(log?: EventBusLogger): DomainEventBus {
  return new EventBus<DomainEvents>(log);
}
