import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Clock } from '../../platform/clock.js';
import type { DocumentCollection } from '../../platform/document-collection.js';
import type { Principal } from '../../platform/operations.js';
import type { AuthService } from '../auth/auth-service.js';
import type { UserView } from '../auth/model.js';
import type { DeviceService } from '../devices/device-service.js';
import { accessoryHubErrors } from './errors.js';
import { BRIDGE_PLUGIN, type HomebridgeSupervisor } from './homebridge.js';

/** The platform our plugin registers, and its package name in Homebridge's plugin folder. */
export const BRIDGE_PLATFORM = 'HomeControlBridge';
const TOKEN_TTL_SECONDS = 365 * 86_400;

/** A command the hub queues for the plugin, delivered at least once: until acknowledged, every pull answers it again. */
export interface ImportCommand {
  id: string;
  action: 'import' | 'remove';
  accessoryId: string;
  createdAt: number;
  updatedAt: number;
}

export interface ExternalAccessory {
  uuid: string;
  displayName: string;
  plugin?: string;
  services?: string[];
}

/** What the plugin exposes of a hub device in Apple Home. */
export interface BridgedDevice {
  id: string;
  name: string;
  kind: 'switch';
  on: boolean;
  online: boolean;
}

export interface PluginBridgeDeps {
  dir: string;
  /** Where our plugin's source is (copied into Homebridge's plugin folder). */
  pluginSource: string;
  homebridge: HomebridgeSupervisor;
  devices: DeviceService;
  auth: AuthService;
  accounts: { list(): Promise<UserView[]> };
  queue: DocumentCollection<ImportCommand>;
  clock: Clock;
  /** The hub's own URL as the plugin reaches it (loopback), once the HTTP port is known. */
  hubUrl: () => string | undefined;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

/** Whether a device's state reads as on (an `on` flag, or `power: "on"`). */
export const isOn = (state: Record<string, unknown> | undefined) => Boolean(state?.on ?? state?.power === 'on');

const onOff = (commands: Array<{ name: string }>) => commands.some((c) => c.name === 'turn_on') && commands.some((c) => c.name === 'turn_off');

/**
 * The plugin bridge: a Homebridge platform plugin of ours (`accessory-hub/plugin/`), installed into
 * the managed Homebridge, that exposes the hub's devices as HomeKit accessories. It signs in with a
 * token of scope `plugin-bridge` the hub issues it (accepted only on /accessory-hub/plugin/*),
 * reads the devices, keeps them live from a stream, carries HomeKit writes back as device
 * commands, reports other plugins' accessories, and pulls the import commands the hub queues.
 */
export class PluginBridge {
  private external: ExternalAccessory[] = [];
  private tokenId: string | undefined;

  constructor(private readonly deps: PluginBridgeDeps) {}

  /** Before Homebridge starts: our plugin in its folder, its platform block with the hub's URL and a fresh token (the previous one revoked). */
  async prepare(): Promise<void> {
    await this.deps.queue.load();
    const url = this.deps.hubUrl();
    const admin = (await this.deps.accounts.list()).find((u) => u.role === 'admin' && !u.disabled);
    if (!url || !admin) {
      this.deps.log.warn({}, 'plugin bridge not set up: no hub URL or no admin account yet');
      return;
    }
    // Its source is kept beside the plugin folder and is a `file:` dependency of it: npm, installing
    // other plugins, links it instead of pruning it; until then a copy sits in the plugin folder.
    const source = path.join(this.deps.homebridge.builtinPluginsDir, BRIDGE_PLUGIN);
    await fs.rm(source, { recursive: true, force: true });
    await fs.cp(this.deps.pluginSource, source, { recursive: true });
    const linked = path.join(this.deps.homebridge.pluginsDir, BRIDGE_PLUGIN);
    await fs.rm(linked, { recursive: true, force: true });
    await fs.cp(this.deps.pluginSource, linked, { recursive: true });
    await this.deps.homebridge.addDependency(BRIDGE_PLUGIN, `file:./builtin-plugins/${BRIDGE_PLUGIN}`);
    if (this.tokenId) await this.deps.auth.revoke(this.tokenId, 'plugin-bridge');
    const principal: Principal = { userId: admin.id, username: admin.username, role: 'admin', scope: 'plugin-bridge', tokenHash: '' };
    const issued = await this.deps.auth.issueScoped(principal, 'plugin-bridge', TOKEN_TTL_SECONDS);
    this.tokenId = issued.id;
    const { port, pin } = await this.deps.homebridge.settings();
    await this.deps.homebridge.editConfig((config) => {
      const platforms = ((config.platforms as Array<Record<string, unknown>> | undefined) ?? []).filter((p) => p.platform !== BRIDGE_PLATFORM);
      // The bridge's HAP port and code let the plugin read the other plugins' accessories (insecure mode, loopback).
      config.platforms = [...platforms, { platform: BRIDGE_PLATFORM, name: 'Home Control', hubUrl: url, token: issued.accessToken, hapPort: port, hapPin: pin }];
    });
  }

  /** The hub devices the plugin exposes: those that turn on and off (not the accessory hub's own, which came from Homebridge). */
  devices(): BridgedDevice[] {
    const { devices: states } = this.deps.devices.stateSnapshot();
    return this.deps.devices
      .list()
      .filter((d) => d.driverKey !== 'accessory-hub' && onOff(d.commands))
      .map((d) => ({ id: d.id, name: d.name, kind: 'switch' as const, on: isOn(states[d.id]?.state), online: d.online }));
  }

  isBridged(deviceId: string): boolean {
    return this.devices().some((d) => d.id === deviceId);
  }

  /** A HomeKit write to a hub device: `on` true or false becomes turn_on or turn_off. */
  async command(deviceId: string, on: boolean): Promise<unknown> {
    if (!this.isBridged(deviceId)) throw accessoryHubErrors.ACCESSORY_NOT_FOUND({ accessoryId: deviceId });
    return this.deps.devices.command(deviceId, on ? 'turn_on' : 'turn_off', {});
  }

  syncExternal(accessories: ExternalAccessory[]): { accessories: number } {
    this.external = accessories;
    return { accessories: accessories.length };
  }

  externalAccessories(): ExternalAccessory[] {
    return this.external;
  }

  async enqueue(action: ImportCommand['action'], accessoryId: string): Promise<ImportCommand> {
    return (await this.deps.queue.save({ id: randomUUID(), action, accessoryId })).item;
  }

  pending(): ImportCommand[] {
    return this.deps.queue.list();
  }

  async ack(id: string): Promise<{ id: string; acknowledged: true }> {
    if (!this.deps.queue.find(id)) throw accessoryHubErrors.IMPORT_COMMAND_NOT_FOUND({ id });
    await this.deps.queue.remove(id);
    return { id, acknowledged: true };
  }
}
