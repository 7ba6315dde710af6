import type { AiAction, AiBackend, AiModel, PromptRequest } from '../../domain/ai/ports.js';
import type { Clock } from '../../platform/clock.js';

interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  tool_calls?: Array<{ function: { name: string; arguments: Record<string, unknown> } }>;
}

interface Device {
  id: string;
  name: string;
  commands: Array<{ name: string }>;
}

const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'device_command',
      description:
        "Send a command to a device of the home. Every device of a class takes its class's standard commands, whatever brought it: turn_on, turn_off, toggle; set_brightness {brightness 0-100}, set_color_temp {kelvin}, set_hs_color {hue, saturation} (lights); open, close, stop, set_position {position 0-100} (covers); set_target_temperature {temperature}, set_hvac_mode {mode} (climate); lock, unlock (locks); set_percentage {percentage} (fans); play, pause, next, previous, volume_set {volume 0-100} (media players).",
      parameters: { type: 'object', properties: { device: { type: 'string', description: 'Device name or id.' }, command: { type: 'string' }, params: { type: 'object' } }, required: ['device', 'command'] },
    },
  },
  { type: 'function', function: { name: 'run_program', description: 'Run a program of the home.', parameters: { type: 'object', properties: { program: { type: 'string' } }, required: ['program'] } } },
  { type: 'function', function: { name: 'run_scene', description: 'Activate a scene.', parameters: { type: 'object', properties: { scene: { type: 'string' } }, required: ['scene'] } } },
  { type: 'function', function: { name: 'get_state', description: 'Read a device: its class (light, lock, sensor…) and its reading (on, brightness, locked, value with its unit…).', parameters: { type: 'object', properties: { device: { type: 'string' } }, required: ['device'] } } },
];

/** Commands that take something away or open something up: they wait for `confirm`. */
const DESTRUCTIVE = /unlock|disarm|delete|remove|open_door/i;
const MAX_TOOL_ROUNDS = 5;

/** Reads an NDJSON response body line by line. */
async function* lines(body: ReadableStream<Uint8Array>): AsyncGenerator<Record<string, unknown>> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    let i;
    while ((i = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, i).trim();
      buffer = buffer.slice(i + 1);
      if (line) yield JSON.parse(line) as Record<string, unknown>;
    }
  }
  if (buffer.trim()) yield JSON.parse(buffer) as Record<string, unknown>;
}

/**
 * An Ollama-compatible server (`AI_OLLAMA_URL`), which the hub does not start: models from
 * `/api/tags`, pulled with `/api/pull` (streamed progress), loaded and unloaded with `keep_alive`,
 * and chats streamed from `/api/chat` with the home's operations offered as tools. A tool call is
 * carried out with the caller's own credential and its result fed back to the model.
 */
export class OllamaBackend implements AiBackend {
  readonly name = 'ollama';
  private ready = false;
  private present = false;

  constructor(
    private readonly url: string,
    readonly model: string,
    private readonly recommended: string[],
    /** Times the health check's answer. */
    private readonly clock: Clock,
    private readonly timeoutMs = 10_000,
  ) {}

  installed(): boolean {
    return this.present;
  }

  modelReady(): boolean {
    return this.ready;
  }

  async health() {
    const started = this.clock.now();
    try {
      const res = await fetch(`${this.url}/api/version`, { signal: AbortSignal.timeout(this.timeoutMs) });
      return { reachable: res.ok, latencyMs: this.clock.now() - started, ...(res.ok ? {} : { detail: `answered ${res.status}` }) };
    } catch (err) {
      return { reachable: false, latencyMs: this.clock.now() - started, detail: (err as Error).message };
    }
  }

  async models(): Promise<AiModel[]> {
    const res = await fetch(`${this.url}/api/tags`, { signal: AbortSignal.timeout(this.timeoutMs) });
    if (!res.ok) throw new Error(`Ollama answered ${res.status}`);
    const { models } = (await res.json()) as { models: Array<{ name: string; size?: number }> };
    this.present = models.some((m) => m.name === this.model);
    const out: AiModel[] = models.map((m) => ({ name: m.name, installed: true, recommended: this.recommended.includes(m.name), ...(m.size ? { sizeBytes: m.size } : {}) }));
    for (const name of this.recommended) if (!out.some((m) => m.name === name)) out.push({ name, installed: false, recommended: true });
    return out;
  }

  async start(): Promise<void> {
    await this.models().catch(() => undefined);
    const res = await fetch(`${this.url}/api/generate`, { method: 'POST', body: JSON.stringify({ model: this.model, keep_alive: '30m' }), signal: AbortSignal.timeout(this.timeoutMs * 6) }).catch(() => undefined);
    this.ready = Boolean(res?.ok);
  }

  async stop(): Promise<void> {
    this.ready = false;
    await fetch(`${this.url}/api/generate`, { method: 'POST', body: JSON.stringify({ model: this.model, keep_alive: 0 }), signal: AbortSignal.timeout(this.timeoutMs) }).catch(() => undefined);
  }

  async remove(): Promise<void> {
    const res = await fetch(`${this.url}/api/delete`, { method: 'DELETE', body: JSON.stringify({ model: this.model }), signal: AbortSignal.timeout(this.timeoutMs) });
    if (!res.ok) throw new Error(`Ollama answered ${res.status}`);
    this.present = false;
    this.ready = false;
  }

  /** `/api/pull` streams `{status, digest, total, completed}` per layer; progress is their sum. Ollama resumes a pull it had begun. */
  async pull(model: string, onProgress: (p: { completedBytes: number; totalBytes: number; state: string }) => void, signal: AbortSignal): Promise<void> {
    const res = await fetch(`${this.url}/api/pull`, { method: 'POST', body: JSON.stringify({ model, stream: true }), signal });
    if (!res.ok || !res.body) throw new Error(`Ollama answered ${res.status}`);
    const layers = new Map<string, { total: number; completed: number }>();
    let done = false;
    for await (const line of lines(res.body)) {
      if (typeof line.error === 'string') throw new Error(line.error);
      if (typeof line.digest === 'string' && typeof line.total === 'number') layers.set(line.digest, { total: line.total, completed: typeof line.completed === 'number' ? line.completed : 0 });
      const sums = [...layers.values()].reduce((a, l) => ({ total: a.total + l.total, completed: a.completed + l.completed }), { total: 0, completed: 0 });
      onProgress({ completedBytes: sums.completed, totalBytes: sums.total, state: String(line.status ?? 'pulling') });
      if (line.status === 'success') done = true;
    }
    if (!done) throw new Error('the pull ended before it succeeded');
    if (model === this.model) this.present = true;
  }

  async prompt(request: PromptRequest): Promise<{ answer: string; actions: AiAction[] }> {
    const messages: ChatMessage[] = [
      { role: 'system', content: 'You are the assistant of a home automation hub. Use the tools to act on the home; answer briefly.' },
      ...request.history,
      { role: 'user', content: request.prompt },
    ];
    const actions: AiAction[] = [];
    for (let round = 0; round <= MAX_TOOL_ROUNDS; round++) {
      const res = await fetch(`${this.url}/api/chat`, { method: 'POST', body: JSON.stringify({ model: this.model, messages, tools: TOOLS, stream: true }), signal: request.signal });
      if (!res.ok || !res.body) throw new Error(`Ollama answered ${res.status}`);
      let content = '';
      const calls: NonNullable<ChatMessage['tool_calls']> = [];
      let finished = false;
      for await (const line of lines(res.body)) {
        const message = line.message as ChatMessage | undefined;
        if (message?.content) {
          content += message.content;
          request.onToken(message.content);
        }
        if (message?.tool_calls) calls.push(...message.tool_calls);
        if (line.done === true) finished = true;
      }
      if (!finished) throw new Error('the model stopped answering mid-stream');
      messages.push({ role: 'assistant', content, ...(calls.length > 0 ? { tool_calls: calls } : {}) });
      if (calls.length === 0) return { answer: content, actions };
      for (const call of calls) {
        const outcome = await this.tool(call.function.name, call.function.arguments ?? {}, request);
        actions.push(outcome.action);
        request.onAction(outcome.action);
        messages.push({ role: 'tool', content: JSON.stringify(outcome.result) });
      }
    }
    return { answer: 'I stopped after too many steps.', actions };
  }

  private async tool(name: string, args: Record<string, unknown>, request: PromptRequest): Promise<{ action: AiAction; result: unknown }> {
    const failed = (message: string): { action: AiAction; result: unknown } => ({ action: { kind: name, ok: false, status: 'failed', detail: { message } }, result: { error: message } });
    try {
      if (name === 'device_command' || name === 'get_state') {
        const { devices } = (await request.call('devices.list', {})) as { devices: Device[] };
        const wanted = String(args.device ?? '').toLowerCase();
        const device = devices.find((d) => d.id === args.device || d.name.toLowerCase() === wanted);
        if (!device) return failed(`no device ${String(args.device)}`);
        if (name === 'get_state') {
          const state = await request.call('devices.get', { id: device.id });
          return { action: { kind: name, target: device.name, ok: true, status: 'done' }, result: state };
        }
        const command = String(args.command ?? '');
        if (DESTRUCTIVE.test(command) && !request.confirm) {
          return { action: { kind: name, target: device.name, ok: false, status: 'needs_confirmation', detail: { command } }, result: { needsConfirmation: true, say: `Ask the user to confirm ${command} on ${device.name}.` } };
        }
        const result = await request.call('devices.command', { id: device.id, command, ...(args.params ? { params: args.params } : {}) });
        return { action: { kind: name, target: device.name, ok: true, status: 'done', detail: { command } }, result };
      }
      if (name === 'run_program') {
        const { programs } = (await request.call('programs.list', {})) as { programs: Device[] };
        const program = programs.find((p) => p.id === args.program || p.name.toLowerCase() === String(args.program ?? '').toLowerCase());
        if (!program) return failed(`no program ${String(args.program)}`);
        const run = await request.call('programs.run', { id: program.id });
        return { action: { kind: name, target: program.name, ok: true, status: 'done' }, result: run };
      }
      if (name === 'run_scene') {
        const result = await request.call('scenes.run', { id: String(args.scene ?? '') });
        return { action: { kind: name, target: String(args.scene), ok: true, status: 'done' }, result };
      }
      return failed(`no tool ${name}`);
    } catch (err) {
      return failed(err instanceof Error ? err.message : String(err));
    }
  }
}
