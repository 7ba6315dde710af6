import type { DeviceView as DeviceRecord } from '../devices/device-service.js';
import type { AiAction, AiBackend, PromptRequest } from './ports.js';

interface ParseAnswer {
  matched: boolean;
  intent?: string;
  targets: Array<{ kind: string; id: string; name?: string }>;
}

interface ExecuteAnswer {
  ok: boolean;
  speech: string;
  results: Array<{ target: { kind: string; id: string; name?: string }; ok: boolean; detail?: unknown; error?: { code: string; message: string } }>;
}

/** "Which lights are on?", "what devices are off": a question the templates do not cover, answered from the devices' state. */
const LIST_QUESTION = /^(?:which|what)\s+(lights?|lamps?|devices?)\s+(?:is|are)\s+(on|off)\s*\??$/i;

/** The fields of a device record (devices.list) this backend reads: the model's class and reading. */
type DeviceView = Pick<DeviceRecord, 'id' | 'name' | 'online' | 'deviceClass' | 'reading'>;

/** Intents that take something away or open something up: they wait for `confirm: true`. */
const DESTRUCTIVE = /unlock|disarm|delete|remove|open_door|garage_open/i;

/**
 * The default backend: the hub's local intent engine over the live home graph (no download, no
 * model, no network). A prompt is understood (`intents.parse`) and carried out
 * (`intents.execute`), both under the caller's own credential, so it can do only what the
 * caller could through the API. Its answer is one token: there is nothing to stream.
 */
export class IntentsBackend implements AiBackend {
  readonly name = 'intents';
  readonly model = 'intents';
  private ready = false;

  constructor(private readonly graphLoaded: () => boolean) {}

  installed(): boolean {
    return true;
  }

  modelReady(): boolean {
    return this.ready && this.graphLoaded();
  }

  async health() {
    return { reachable: true, latencyMs: 0 };
  }

  async models() {
    return [{ name: 'intents', installed: true, recommended: true, description: 'The local intent engine (templates over the live home graph).' }];
  }

  async start(): Promise<void> {
    this.ready = true;
  }

  async stop(): Promise<void> {
    this.ready = false;
  }

  async prompt(request: PromptRequest): Promise<{ answer: string; actions: AiAction[] }> {
    const question = LIST_QUESTION.exec(request.prompt.trim());
    if (question) return this.listWhich(request, question[1]!.toLowerCase(), question[2]!.toLowerCase() as 'on' | 'off');
    const parsed = (await request.call('intents.parse', { text: request.prompt })) as ParseAnswer;
    if (parsed.matched && parsed.intent && DESTRUCTIVE.test(parsed.intent) && !request.confirm) {
      const action: AiAction = { kind: parsed.intent, ok: false, status: 'needs_confirmation', detail: { targets: parsed.targets } };
      request.onAction(action);
      const answer = `That would ${parsed.intent}. Send it again with confirm: true to go ahead.`;
      request.onToken(answer);
      return { answer, actions: [action] };
    }
    let result: ExecuteAnswer;
    try {
      result = (await request.call('intents.execute', { text: request.prompt })) as ExecuteAnswer;
    } catch (err) {
      const failure = err as { code?: string; message?: string; details?: unknown };
      const details = failure.details as ExecuteAnswer | undefined;
      result = details && Array.isArray(details.results) ? details : { ok: false, speech: failure.message ?? 'I could not do that.', results: [] };
    }
    const actions: AiAction[] = result.results.map((r) => ({
      kind: parsed.intent ?? 'intent',
      target: r.target.name ?? r.target.id,
      ok: r.ok,
      status: r.ok ? 'done' : 'failed',
      ...(r.error ? { detail: r.error } : r.detail !== undefined ? { detail: r.detail } : {}),
    }));
    for (const action of actions) request.onAction(action);
    request.onToken(result.speech);
    return { answer: result.speech, actions };
  }

  /** Reads the devices the caller sees and their state (its own rights), and names those that are on (or off). */
  private async listWhich(request: PromptRequest, what: string, wanted: 'on' | 'off'): Promise<{ answer: string; actions: AiAction[] }> {
    const { devices } = (await request.call('devices.list', {})) as { devices: DeviceView[] };
    const lights = what.startsWith('light') || what.startsWith('lamp');
    const matching: string[] = [];
    // The list carries each device's reading: one call, and "on" means what it means everywhere.
    for (const d of devices.filter((x) => x.online && (!lights || x.deviceClass === 'light'))) {
      if (d.reading.on !== undefined && d.reading.on === (wanted === 'on')) matching.push(d.name);
    }
    const noun = lights ? 'lights' : 'devices';
    const answer =
      matching.length === 0
        ? `No ${noun} are ${wanted}.`
        : matching.length === 1
          ? `The ${matching[0]} is ${wanted}.`
          : `${matching.slice(0, -1).map((n) => `the ${n}`).join(', ')} and the ${matching.at(-1)} are ${wanted}.`.replace(/^t/, 'T');
    request.onToken(answer);
    return { answer, actions: [] };
  }
}
