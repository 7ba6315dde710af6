import type { Clock } from '../../platform/clock.js';
import type { DocumentRepository } from '../../platform/document-repository.js';
import { defineModule } from '../../platform/module.js';
import type { OperationRegistry, Principal } from '../../platform/operations.js';
import type { AccountService } from '../auth/accounts.js';
import type { AuthService } from '../auth/auth-service.js';
import type { DeviceService } from '../devices/device-service.js';
import { BrokerUsers, type BrokerUser } from './broker-users.js';
import { mqttOperations } from './operations.js';
import type { MqttRuntime } from './ports.js';

/** How long the exposure's token lives before it is issued anew. */
const CALLER_TOKEN_TTL_SECONDS = 86_400;

/**
 * Commands published to exposed devices, run through the registry as the `mqtt` caller: a token
 * of scope `mqtt` held in memory (issued for an enabled admin, revoked at stop), so they are
 * checked, translated and journalled like any surface's (the activity log names the caller).
 */
export class MqttCommandCaller {
  private issued: { token: string; id: string; expiresAt: number } | undefined;
  private calls = 0;

  constructor(
    private readonly deps: { registry: OperationRegistry; auth: AuthService; accounts: AccountService; clock: Clock },
  ) {}

  async command(deviceId: string, command: string, params: Record<string, unknown>): Promise<unknown> {
    const token = await this.token();
    return this.deps.registry.invoke('mqtt.exposed.command', { json: { deviceId, command, params } }, { credential: { token }, clientAddress: 'mqtt', requestId: `mqtt-${++this.calls}` });
  }

  private async token(): Promise<string> {
    if (this.issued && this.issued.expiresAt - 60_000 > this.deps.clock.now()) return this.issued.token;
    const admin = (await this.deps.accounts.list()).find((u) => u.role === 'admin' && !u.disabled);
    if (!admin) throw new Error('no enabled admin account to run MQTT commands for');
    const principal: Principal = { userId: admin.id, username: admin.username, role: 'admin', scope: 'mqtt', tokenHash: '' };
    const issued = await this.deps.auth.issueScoped(principal, 'mqtt', CALLER_TOKEN_TTL_SECONDS);
    if (this.issued) await this.deps.auth.revoke(this.issued.id, 'mqtt');
    this.issued = { token: issued.accessToken, id: issued.id, expiresAt: issued.expiresAt };
    return issued.accessToken;
  }

  async stop(): Promise<void> {
    const issued = this.issued;
    this.issued = undefined;
    if (issued) await this.deps.auth.revoke(issued.id, 'mqtt').catch(() => undefined);
  }
}

export interface MqttModuleDeps {
  mode: 'off' | 'external' | 'embedded';
  /** The adapter (src/adapters/mqtt); undefined when MQTT is off. */
  runtime: MqttRuntime | undefined;
  users: BrokerUsers;
  caller: MqttCommandCaller;
  devices: DeviceService;
  baseTopic: string;
}

export function brokerUsers(repository: DocumentRepository<BrokerUser>, clock: Clock): BrokerUsers {
  return new BrokerUsers(repository, clock);
}

/**
 * MQTT (docs/mqtt.md): the embedded broker's users, and the link the adapter runs (devices that
 * announce themselves with Home Assistant discovery; the hub's devices exposed). Started after the
 * devices and drivers, so that discovered devices land in a loaded registry.
 */
export function mqttModule({ mode, runtime, users, caller, devices, baseTopic }: MqttModuleDeps) {
  return defineModule({
    name: 'mqtt',
    needs: ['storage', 'auth', 'devices', 'drivers', 'fleet'],
    operations: { mqtt: mqttOperations({ runtime, mode, users, devices, baseTopic }) },
    users,
    async start() {
      await users.load();
      await runtime?.start();
    },
    async stop() {
      await runtime?.stop();
      await caller.stop();
    },
  });
}
