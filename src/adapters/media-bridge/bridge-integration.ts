import { systemTimers, type Timers } from '../../platform/clock.js';
import { errorCode, messageOf, NetworkFailureError, networkFailureOf } from '../../platform/network-failures.js';
import { DeviceAvailability, runBuiltInAction, type ActionSpec, type BuiltInDriverContext, type CommandHandler, type IntegrationStatus } from '../../domain/drivers/builtin.js';
import type { ServerToDriverMessage } from '../../domain/drivers/messages.js';
import type { MediaEndpoint, NormalizedCommand } from '../../domain/media/model.js';
import type { EndpointController } from '../../domain/media/ports.js';

/**
 * The device commands a bridge endpoint's device offers for each normalized command it
 * registered, in the hub's device vocabulary (so intents, entities and the player commands all
 * find them), and how each is sent back as the normalized command the registrant understands.
 */
const DEVICE_COMMANDS: Record<NormalizedCommand, Array<{ name: string; params?: Record<string, unknown>; send: (params: Record<string, unknown>) => Record<string, unknown> }>> = {
  play: [{ name: 'play', send: () => ({}) }],
  pause: [{ name: 'pause', send: () => ({}) }],
  toggle: [{ name: 'play_pause', send: () => ({}) }],
  stop: [{ name: 'stop', send: () => ({}) }],
  next: [{ name: 'next', send: () => ({}) }],
  previous: [{ name: 'previous', send: () => ({}) }],
  seek: [{ name: 'seek', params: { position: { type: 'number' } }, send: (p) => ({ position: p.position }) }],
  volume_set: [{ name: 'volume_set', params: { volume: { type: 'number', minimum: 0, maximum: 100 } }, send: (p) => ({ volume: p.volume }) }],
  volume_step: [
    { name: 'volume_up', send: () => ({ delta: 1 }) },
    { name: 'volume_down', send: () => ({ delta: -1 }) },
  ],
  mute: [{ name: 'mute', params: { muted: { type: 'boolean' } }, send: (p) => (typeof p.muted === 'boolean' ? { muted: p.muted } : {}) }],
  shuffle: [{ name: 'shuffle', params: { enabled: { type: 'boolean' } }, send: (p) => ({ enabled: p.enabled }) }],
  repeat: [{ name: 'repeat', params: { mode: { type: 'string', enum: ['off', 'one', 'all'] } }, send: (p) => ({ mode: p.mode }) }],
  power_on: [{ name: 'turn_on', send: () => ({}) }],
  power_off: [{ name: 'turn_off', send: () => ({}) }],
  launch_app: [
    {
      name: 'apps.launch',
      params: { appId: { type: 'string' }, contentId: { type: 'string' }, mediaType: { type: 'string' } },
      send: (p) => ({ appId: p.appId, ...(p.contentId ? { contentId: p.contentId } : {}), ...(p.mediaType ? { mediaType: p.mediaType } : {}) }),
    },
  ],
  select_source: [{ name: 'select_input', params: { input: { type: 'string' } }, send: (p) => ({ source: p.input }) }],
};

/** Device command name → the normalized command it goes back as. */
const NORMALIZED_OF = new Map<string, { command: NormalizedCommand; send: (params: Record<string, unknown>) => Record<string, unknown> }>();
for (const [command, entries] of Object.entries(DEVICE_COMMANDS) as Array<[NormalizedCommand, (typeof DEVICE_COMMANDS)[NormalizedCommand]]>) {
  for (const entry of entries) NORMALIZED_OF.set(entry.name, { command, send: entry.send });
}

const MAX_ANSWER_BYTES = 1024 * 1024;

interface Bridged {
  endpoint: MediaEndpoint;
  announced: boolean;
}

/**
 * Bridge endpoints (another hub's player, an app's player) as devices of driver `media-bridge`:
 * a command is POSTed to the endpoint's callback URL as `{endpointId, command, params}` with its
 * normalized name, bounded by the endpoint's time-out. The registrant's state reports go into the
 * state authority; a callback that cannot be reached takes the device offline until it answers
 * or registers again.
 */
export class BridgeIntegration implements EndpointController {
  readonly kind = 'bridge' as const;
  readonly driverKey = 'media-bridge';
  readonly name = 'Media bridge endpoints';
  private context: BuiltInDriverContext | null = null;
  private readonly bridged = new Map<string, Bridged>();
  private readonly availability = new DeviceAvailability();
  private readonly actions: ActionSpec<Bridged>;

  constructor(private readonly options: { timers?: Timers; fetcher?: typeof fetch } = {}) {
    this.actions = {
      context: () => this.context,
      timers: options.timers ?? systemTimers,
      timeoutMs: (entry) => entry.endpoint.bridge?.timeoutMs ?? 5000,
      target: (deviceId) => {
        const entry = this.bridged.get(deviceId);
        if (!entry?.endpoint.bridge) throw new NetworkFailureError('rejected', 'the endpoint is not registered (disabled or removed)');
        return entry;
      },
      handler: (command, entry) => this.handlerFor(command, entry),
      settled: (entry, outcome) => {
        if (this.bridged.get(entry.endpoint.id) !== entry) return;
        // The callback answered (whatever it said), or could not be reached.
        if (outcome.ok || (outcome.failure !== 'unreachable' && outcome.failure !== 'timeout')) this.availability.set(entry.endpoint.id, true);
        else this.availability.set(entry.endpoint.id, false, outcome.error);
      },
    };
  }

  connect(context: BuiltInDriverContext): void {
    this.context = context;
    this.availability.bind(context);
  }

  disconnect(): void {
    this.context = null;
    this.availability.bind(null);
  }

  status(): IntegrationStatus {
    return this.availability.status();
  }

  control(endpoint: MediaEndpoint): void {
    const existing = this.bridged.get(endpoint.id);
    const entry: Bridged = { endpoint, announced: existing?.announced ?? false };
    this.bridged.set(endpoint.id, entry);
    this.availability.track(endpoint.id);
    this.announce(entry);
    // Until the registrant or a command says it is there, a bridged endpoint loaded from storage is not vouched for.
    if (this.availability.get(endpoint.id) !== true) this.availability.set(endpoint.id, false, 'the registrant has not reported since the endpoint was loaded', { force: true });
  }

  release(endpointId: string): void {
    const entry = this.bridged.get(endpointId);
    if (!entry) return;
    this.bridged.delete(endpointId);
    this.availability.forget(endpointId);
    this.context?.emit({ type: 'DEVICE_REMOVED', deviceId: endpointId });
  }

  report(endpointId: string, state: Record<string, unknown>): void {
    const entry = this.bridged.get(endpointId);
    if (!entry) return;
    if (Object.keys(state).length > 0) this.context?.emit({ type: 'STATE_UPDATE', deviceId: endpointId, state });
    this.availability.set(endpointId, true);
  }

  receive(message: ServerToDriverMessage): void {
    runBuiltInAction(this.actions, message);
  }

  /** The device command as the normalized command the registrant takes, POSTed to its callback. */
  private handlerFor(command: string, entry: Bridged): CommandHandler<Bridged> {
    const bridge = entry.endpoint.bridge!;
    if (command === 'play_url' && bridge.playsUrls) {
      return (e, params, { signal }) => {
        const { url, mode } = params as { url?: unknown; mode?: unknown };
        return this.forward(e, 'play_url', { url, ...(typeof mode === 'string' ? { mode } : {}) }, signal);
      };
    }
    const mapped = NORMALIZED_OF.get(command);
    if (!mapped || !bridge.commands.includes(mapped.command)) throw new NetworkFailureError('unsupported', `the endpoint does not take ${command}`);
    return (e, params, { signal }) => this.forward(e, mapped.command, mapped.send(params), signal);
  }

  private async forward(entry: Bridged, command: NormalizedCommand | 'play_url', params: Record<string, unknown>, signal: AbortSignal): Promise<unknown> {
    const bridge = entry.endpoint.bridge!;
    let response: Response;
    try {
      response = await (this.options.fetcher ?? fetch)(bridge.callbackUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', ...(bridge.callbackToken ? { authorization: `Bearer ${bridge.callbackToken}` } : {}) },
        body: JSON.stringify({ endpointId: entry.endpoint.id, command, params }),
        signal,
        redirect: 'error',
      });
    } catch (err) {
      const cause = networkFailureOf(err) === 'timeout' ? 'timeout' : 'unreachable';
      throw new NetworkFailureError(cause, cause === 'timeout' ? `no answer from the callback within ${bridge.timeoutMs} ms` : `the callback could not be reached (${errorCode(err) ?? messageOf(err)})`, { cause: err });
    }
    let body: unknown;
    try {
      body = await readJson(response);
    } catch (err) {
      throw new NetworkFailureError('unreachable', `the callback's answer could not be read (${errorCode(err) ?? messageOf(err)})`, { cause: err });
    }
    const message = (body as { error?: { message?: unknown }; message?: unknown } | undefined)?.error?.message ?? (body as { message?: unknown } | undefined)?.message;
    const reason = `the callback answered HTTP ${response.status}${typeof message === 'string' ? `: ${message}` : ''}`;
    // Its 4xx refuses the command (422); its 5xx is its own failure (502, the driver's error).
    if (response.status >= 400 && response.status < 500) throw new NetworkFailureError('rejected', reason);
    if (!response.ok) throw new Error(reason);
    return body;
  }

  private announce(entry: Bridged): void {
    const bridge = entry.endpoint.bridge;
    if (!bridge) return;
    entry.announced = true;
    const commands = bridge.commands.flatMap((c) => DEVICE_COMMANDS[c].map(({ name, params }) => ({ name, ...(params ? { params: { type: 'object', properties: params } } : {}) })));
    if (bridge.playsUrls) commands.push({ name: 'play_url', params: { type: 'object', properties: { url: { type: 'string' }, mode: { type: 'string', enum: ['replace', 'append', 'next'] } } } });
    this.context?.emit({
      type: 'DEVICE_DISCOVERED',
      device: {
        id: entry.endpoint.id,
        name: entry.endpoint.label ?? entry.endpoint.name,
        category: 'media_player',
        capabilities: ['media_player'],
        commands,
        properties: { callbackUrl: bridge.callbackUrl, registeredBy: bridge.registeredBy },
      },
    });
  }
}

/** The answer as JSON when it is JSON, undefined when empty or not JSON; at most 1 MiB is read. */
async function readJson(response: Response): Promise<unknown> {
  const length = Number(response.headers.get('content-length') ?? 0);
  if (length > MAX_ANSWER_BYTES) throw new Error(`answer of ${length} bytes is larger than ${MAX_ANSWER_BYTES}`);
  const text = await response.text();
  if (text.length > MAX_ANSWER_BYTES) throw new Error(`answer is larger than ${MAX_ANSWER_BYTES} bytes`);
  if (text.trim() === '' || !(response.headers.get('content-type') ?? '').includes('json')) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
