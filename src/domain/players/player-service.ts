import { SerialWrites } from '../../platform/serial-writes.js';
import { isIP } from 'node:net';
import type { Clock } from '../../platform/clock.js';
import type { DocumentCollection } from '../../platform/document-collection.js';
import { playerErrors } from './errors.js';
import type { AccessDetails, PersistedStatus, PlayerAssignment, PlayerConnection, PlayerRecord, PlayerStatus, RosterRecord } from './model.js';
import { isoOrNull, type Roster, type RuntimeDevices } from './roster.js';

/** Who the accounts are; the auth service answers it. */
export interface UserDirectory {
  /** Answers the account, or fails with the accounts' own USER_NOT_FOUND. */
  get(id: string): Promise<unknown>;
}

/** A space that must exist, or a 404-kind failure naming it (the home's `SPACE_NOT_FOUND`). */
export interface SpaceCheck {
  get(id: string): unknown;
}

export interface PlayerInput {
  id?: string;
  logicalDeviceId?: string;
  name: string;
  brand?: string;
  category?: string;
  roomId?: string;
  accessDetails?: AccessDetails;
  connection: PlayerConnection;
}

export interface PlayerEntry {
  record: Omit<PlayerRecord, 'persistedStatus'> & { persistedStatus?: Omit<PersistedStatus, 'lastSeenAt'> & { lastSeenAt: string | null } };
  roster: RosterRecord;
  assignedUserIds: string[];
}

const DEFAULT_CATEGORY = 'media_player';
// RFC 1123 labels; a last label of digits only would be a mistyped IPv4 address, not a name.
const HOST_NAME = /^(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;
const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
const isHostName = (host: string) => HOST_NAME.test(host) && !/^\d+$/.test(host.split('.').at(-1)!);

/**
 * Players and who has them. Every write (admin edits, status reports, the runtime's status
 * records, clean-ups after a removed user) runs through one queue: a record is replaced whole, so
 * two writes built from the same old record would lose one of them.
 */
export class PlayerService {
  private readonly writes = new SerialWrites();

  constructor(
    private readonly players: DocumentCollection<PlayerRecord>,
    private readonly assignments: DocumentCollection<PlayerAssignment>,
    readonly roster: Roster,
    private readonly devices: RuntimeDevices,
    private readonly spaces: SpaceCheck,
    private readonly users: UserDirectory,
    private readonly clock: Clock,
  ) {}

  async load(): Promise<void> {
    await this.players.load();
    await this.assignments.load();
  }

  /** Resolves once every write queued so far is done, so that an answer reflects them. */
  async settled(): Promise<void> {
    await this.writes.settled();
  }

  list(): PlayerRecord[] {
    // createdAt, then id: the order survives a restart, where records load by id.
    return this.players.list().sort((a, b) => a.createdAt - b.createdAt || byId(a, b));
  }

  /** Players linked to a logical device. */
  linkedTo(deviceId: string): PlayerRecord[] {
    return this.players.list().filter((p) => p.logicalDeviceId === deviceId);
  }

  entries(): PlayerEntry[] {
    return this.list().map((record) => this.entryOf(record));
  }

  entry(id: string): PlayerEntry {
    return this.entryOf(this.players.get(id));
  }

  /**
   * The user's players as roster records, by name, then id: the order a person looks for, and
   * the same on every call and after a restart, whatever order they were assigned in.
   */
  async rosterOf(userId: string): Promise<RosterRecord[]> {
    await this.settled();
    const assigned = new Set(this.assignments.find(userId)?.playerIds ?? []);
    return this.players
      .list()
      .filter((p) => assigned.has(p.id))
      .sort((a, b) => a.name.localeCompare(b.name, 'en') || byId(a, b))
      .map((p) => this.roster.view(p));
  }

  /** Creates (no id, or an id not used yet) or replaces a player; its status and createdAt stay. */
  save(input: PlayerInput): Promise<PlayerEntry & { created: boolean }> {
    return this.writes.run(async () => {
      const existing = input.id ? this.players.find(input.id) : undefined;
      if (input.logicalDeviceId && input.logicalDeviceId !== existing?.logicalDeviceId) this.devices.registry.get(input.logicalDeviceId);
      if (input.roomId) this.spaces.get(input.roomId);
      const { ip } = input.connection;
      if (isIP(ip) === 0 && !isHostName(ip)) throw playerErrors.PLAYER_ADDRESS_INVALID({ ip }, { details: { field: 'connection.ip', value: ip } });
      const { item, created } = await this.players.save({
        ...(input.id ? { id: input.id } : {}),
        ...(input.logicalDeviceId ? { logicalDeviceId: input.logicalDeviceId } : {}),
        name: input.name,
        ...(input.brand ? { brand: input.brand } : {}),
        category: input.category ?? DEFAULT_CATEGORY,
        ...(input.roomId ? { roomId: input.roomId } : {}),
        accessDetails: input.accessDetails ?? [],
        connection: input.connection,
        ...(existing?.persistedStatus ? { persistedStatus: existing.persistedStatus } : {}),
      });
      return { ...this.entryOf(item), created };
    });
  }

  /** Removes a player and takes it from every user who had it. */
  remove(id: string): Promise<void> {
    return this.writes.run(async () => {
      await this.players.remove(id);
      for (const assignment of this.assignments.list()) {
        if (assignment.playerIds.includes(id)) await this.writeAssignment(assignment.id, assignment.playerIds.filter((p) => p !== id));
      }
    });
  }

  /** Players in a removed space have no room of their own any more (they may still have their device's). */
  spaceRemoved(spaceId: string): Promise<void> {
    return this.writes.run(async () => {
      for (const player of this.players.list()) {
        if (player.roomId === spaceId) await this.players.update(player.id, () => ({ roomId: undefined }));
      }
    });
  }

  /**
   * A status a fleet peer or an admin reports. Without `lastSeenAt`, an online player was seen now
   * and an offline one keeps when it was last seen; a time after the hub's now counts as now
   * (a peer's clock may run ahead).
   */
  reportStatus(id: string, status: PlayerStatus, lastSeenAt?: string): Promise<PlayerEntry> {
    return this.writes.run(async () => {
      const current = this.players.get(id);
      const now = this.clock.now();
      const seen = lastSeenAt !== undefined ? Math.min(Date.parse(lastSeenAt), now) : status === 'online' ? now : (current.persistedStatus?.lastSeenAt ?? null);
      const item = await this.players.update(id, () => ({ persistedStatus: { status, lastSeenAt: seen, origin: 'report' } }));
      return this.entryOf(item);
    });
  }

  /**
   * Records what the runtime knows of each player `decide` answers for (undefined: nothing to
   * record). Decided inside the queue, against the record as earlier writes left it.
   */
  recordRuntimeStatus(players: () => PlayerRecord[], decide: (player: PlayerRecord) => Omit<PersistedStatus, 'origin'> | undefined): Promise<void> {
    return this.writes.run(async () => {
      for (const player of players()) {
        const status = decide(player);
        const current = player.persistedStatus;
        if (!status || (current?.origin === 'runtime' && current.status === status.status && current.lastSeenAt === status.lastSeenAt)) continue;
        await this.players.update(player.id, () => ({ persistedStatus: { ...status, origin: 'runtime' } }));
      }
    });
  }

  async assignmentOf(userId: string): Promise<{ userId: string; playerIds: string[] }> {
    await this.requireUser(userId);
    return { userId, playerIds: this.assignments.find(userId)?.playerIds ?? [] };
  }

  /** Replaces the players a user has; unknown users and players are refused, naming them. */
  assign(userId: string, playerIds: string[]): Promise<{ userId: string; playerIds: string[] }> {
    return this.writes.run(async () => {
      await this.requireUser(userId);
      const wanted = [...new Set(playerIds)];
      const missing = wanted.filter((id) => !this.players.find(id));
      if (missing.length > 0) throw playerErrors.PLAYER_NOT_FOUND({ id: missing.join(', ') }, { details: { playerIds: missing } });
      await this.writeAssignment(userId, wanted);
      return { userId, playerIds: wanted };
    });
  }

  /** A removed account's assignment goes with it. */
  userRemoved(userId: string): Promise<void> {
    return this.writes.run(() => this.writeAssignment(userId, []));
  }

  private async writeAssignment(userId: string, playerIds: string[]): Promise<void> {
    if (playerIds.length > 0) await this.assignments.save({ id: userId, playerIds });
    else if (this.assignments.find(userId)) await this.assignments.remove(userId);
  }

  private async requireUser(userId: string): Promise<void> {
    await this.users.get(userId);
  }

  private entryOf(record: PlayerRecord): PlayerEntry {
    const assignedUserIds = this.assignments
      .list()
      .filter((a) => a.playerIds.includes(record.id))
      .map((a) => a.id);
    const { persistedStatus, ...rest } = record;
    // Answered in ISO 8601, as the roster answers it.
    const shown = persistedStatus ? { persistedStatus: { ...persistedStatus, lastSeenAt: isoOrNull(persistedStatus.lastSeenAt) } } : {};
    return { record: { ...rest, ...shown }, roster: this.roster.view(record), assignedUserIds };
  }
}
