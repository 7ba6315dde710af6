import type { BuiltInDriverContext } from '../../domain/drivers/builtin.js';
import type { ServerToDriverMessage } from '../../domain/drivers/messages.js';
import type { MediaEndpoint, NormalizedCommand } from '../../domain/media/model.js';
import type { EndpointController } from '../../domain/media/ports.js';

type Action = Extract<ServerToDriverMessage, { type: 'ACTION' }>;

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
  reachable: boolean | null;
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
  private context: BuiltInDriverContext | null = null;
  private readonly bridged = new Map<string, Bridged>();

  constructor(private readonly fetcher: typeof fetch = fetch) {}

  connect(context: BuiltInDriverContext): void {
    this.context = context;
  }

  disconnect(): void {
    this.context = null;
  }

  control(endpoint: MediaEndpoint): void {
    const existing = this.bridged.get(endpoint.id);
    const entry: Bridged = { endpoint, announced: existing?.announced ?? false, reachable: existing?.reachable ?? null };
    this.bridged.set(endpoint.id, entry);
    this.announce(entry);
    // Until the registrant or a command says it is there, a bridged endpoint loaded from storage is not vouched for.
    if (entry.reachable !== true) this.setReachable(entry, false, true);
  }

  release(endpointId: string): void {
    const entry = this.bridged.get(endpointId);
    if (!entry) return;
    this.bridged.delete(endpointId);
    this.context?.emit({ type: 'DEVICE_REMOVED', deviceId: endpointId });
  }

  report(endpointId: string, state: Record<string, unknown>): void {
    const entry = this.bridged.get(endpointId);
    if (!entry) return;
    if (Object.keys(state).length > 0) this.context?.emit({ type: 'STATE_UPDATE', deviceId: endpointId, state });
    this.setReachable(entry, true);
  }

  receive(message: ServerToDriverMessage): void {
    if (message.type !== 'ACTION' && message.type !== 'COMMAND_EXECUTE') return;
    const action = message as Action;
    const entry = this.bridged.get(action.deviceId);
    if (entry && action.command === 'play_url' && entry.endpoint.bridge?.playsUrls) {
      const { url, mode } = action.params as { url?: unknown; mode?: unknown };
      void this.forward(entry, action, 'play_url', { url, ...(typeof mode === 'string' ? { mode } : {}) });
      return;
    }
    const mapped = NORMALIZED_OF.get(action.command);
    if (!entry || !mapped || !entry.endpoint.bridge?.commands.includes(mapped.command)) {
      this.context?.fail(action.actionId, 'rejected', entry ? `the endpoint does not take ${action.command}` : 'the endpoint is not registered (disabled or removed)');
      return;
    }
    void this.forward(entry, action, mapped.command, mapped.send(action.params));
  }

  private async forward(entry: Bridged, action: Action, command: NormalizedCommand | 'play_url', params: Record<string, unknown>): Promise<void> {
    const bridge = entry.endpoint.bridge!;
    const fail = (failure: 'unreachable' | 'timeout' | 'rejected', reason: string) => this.context?.fail(action.actionId, failure, reason);
    let response: Response;
    try {
      response = await this.fetcher(bridge.callbackUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', ...(bridge.callbackToken ? { authorization: `Bearer ${bridge.callbackToken}` } : {}) },
        body: JSON.stringify({ endpointId: entry.endpoint.id, command, params }),
        signal: AbortSignal.timeout(bridge.timeoutMs),
        redirect: 'error',
      });
    } catch (err) {
      const timedOut = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
      this.setReachable(entry, false);
      return void fail(timedOut ? 'timeout' : 'unreachable', timedOut ? `no answer from the callback within ${bridge.timeoutMs} ms` : `the callback could not be reached (${causeOf(err)})`);
    }
    let body: unknown;
    try {
      body = await readJson(response);
    } catch (err) {
      this.setReachable(entry, false);
      return void fail('unreachable', `the callback's answer could not be read (${causeOf(err)})`);
    }
    this.setReachable(entry, true);
    const message = (body as { error?: { message?: unknown }; message?: unknown } | undefined)?.error?.message ?? (body as { message?: unknown } | undefined)?.message;
    const reason = `the callback answered HTTP ${response.status}${typeof message === 'string' ? `: ${message}` : ''}`;
    if (response.status >= 400 && response.status < 500) return void fail('rejected', reason);
    if (!response.ok) return void this.context?.emit({ type: 'ACTION_RESULT', actionId: action.actionId, ok: false, error: reason });
    this.context?.emit({ type: 'ACTION_RESULT', actionId: action.actionId, ok: true, ...(body === undefined ? {} : { result: body }) });
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

  private setReachable(entry: Bridged, reachable: boolean, force = false): void {
    if (entry.reachable === reachable && !force) return;
    entry.reachable = reachable;
    this.context?.setOnline(entry.endpoint.id, reachable);
  }
}

function causeOf(err: unknown): string {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  return cause instanceof Error ? (('code' in cause && typeof cause.code === 'string' ? cause.code : '') || cause.message) : String(cause);
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
