import { randomUUID } from 'node:crypto';
import type { Clock } from '../../platform/clock.js';
import { DomainError } from '../../platform/errors.js';
import type { Principal } from '../../platform/operations.js';
import type { DomainEventBus } from '../events.js';
import { aiErrors } from './errors.js';
import type { AiAction, AiBackend } from './ports.js';

export const MAX_PROMPT_CHARS = 4000;
const MAX_TURNS = 20;
const MAX_AGE_MS = 60 * 60 * 1000;
const MAX_CONVERSATIONS_PER_USER = 50;

interface Conversation {
  id: string;
  userId: string;
  turns: Array<{ role: 'user' | 'assistant'; content: string }>;
  updatedAt: number;
}

export interface PromptOutcome {
  requestId: string;
  conversationId: string;
  answer: string;
  actions: AiAction[];
}

/**
 * The assistant: one backend (the local intent engine by default), started and stopped,
 * prompted synchronously or in the background with its tokens, actions and answer as events
 * (`ai.event`, which /ai/events streams to the prompt's author), and conversations kept per user,
 * bounded in turns and age.
 */
export class AiService {
  private running = false;
  private readonly conversations = new Map<string, Conversation>();
  private readonly inflight = new Set<AbortController>();
  private pulling: { model: string; state: string; completedBytes: number; totalBytes: number; controller: AbortController } | undefined;

  constructor(
    private readonly backend: AiBackend,
    private readonly events: DomainEventBus,
    private readonly clock: Clock,
  ) {}

  status() {
    const p = this.pulling;
    return {
      installed: this.backend.installed(),
      running: this.running,
      modelReady: this.running && this.backend.modelReady(),
      backend: this.backend.name,
      model: this.backend.model,
      ...(p ? { progress: { state: p.state, completedBytes: p.completedBytes, totalBytes: p.totalBytes, percent: p.totalBytes > 0 ? Math.round((p.completedBytes / p.totalBytes) * 1000) / 10 : 0 } } : {}),
    };
  }

  /** Starts a model download in the background (409 while one runs); its progress goes out as `progress` events and in the status. */
  install(model: string): { model: string; state: string } {
    if (this.pulling) throw aiErrors.AI_INSTALL_RUNNING({ model: this.pulling.model });
    const pull = this.backend.pull?.bind(this.backend);
    if (!pull) return { model, state: 'installed' };
    const controller = new AbortController();
    const progress = { model, state: 'pulling', completedBytes: 0, totalBytes: 0, controller };
    this.pulling = progress;
    const emit = (type: string, data: unknown) => this.events.emit('ai.event', { type, requestId: null, userId: null, data, at: this.clock.now() });
    void pull(
      model,
      (p) => {
        Object.assign(progress, p);
        emit('progress', { model, ...this.status().progress });
      },
      controller.signal,
    ).then(
      () => {
        this.pulling = undefined;
        emit('progress', { model, state: 'success', completedBytes: progress.totalBytes, totalBytes: progress.totalBytes, percent: 100 });
        this.emitStatus();
      },
      (err: unknown) => {
        this.pulling = undefined;
        emit('error', { model, code: 'AI_PULL_FAILED', message: err instanceof Error ? err.message : String(err) });
        this.emitStatus();
      },
    );
    return { model, state: 'pulling' };
  }

  async uninstall() {
    if (!this.backend.remove) throw aiErrors.AI_OPERATION_UNSUPPORTED({ backend: this.backend.name, what: 'remove its model (it is built in)' });
    await this.backend.remove();
    this.emitStatus();
    return this.status();
  }

  async start() {
    await this.backend.start();
    this.running = true;
    this.emitStatus();
    return this.status();
  }

  async stop() {
    this.running = false;
    for (const controller of this.inflight) controller.abort();
    this.pulling?.controller.abort();
    await this.backend.stop();
    this.emitStatus();
    return this.status();
  }

  health() {
    return this.backend.health();
  }

  models() {
    return this.backend.models();
  }

  /** Checks a prompt and opens its request: throws at once (too long, stopped), so an async prompt answers 202 only when it will run. */
  begin(prompt: string, principal: Principal, conversationId: string | undefined) {
    if (prompt.length > MAX_PROMPT_CHARS) throw aiErrors.PROMPT_TOO_LONG({ max: MAX_PROMPT_CHARS, length: prompt.length });
    if (!this.running) throw aiErrors.AI_NOT_RUNNING();
    // After an uninstall the backend would only answer that its model is missing: say so here.
    if (!this.backend.installed()) throw aiErrors.AI_NOTHING_INSTALLED();
    this.prune();
    const existing = conversationId ? this.conversations.get(conversationId) : undefined;
    const conversation: Conversation =
      existing && existing.userId === principal.userId ? existing : { id: conversationId && !existing ? conversationId : randomUUID(), userId: principal.userId, turns: [], updatedAt: this.clock.now() };
    this.conversations.set(conversation.id, conversation);
    return { requestId: randomUUID(), conversation };
  }

  async run(
    request: { requestId: string; conversation: Conversation },
    prompt: string,
    principal: Principal,
    confirm: boolean,
    call: (operation: string, input: Record<string, unknown>) => Promise<unknown>,
  ): Promise<PromptOutcome> {
    const { requestId, conversation } = request;
    const controller = new AbortController();
    this.inflight.add(controller);
    const emit = (type: string, data: unknown) => this.events.emit('ai.event', { type, requestId, userId: principal.userId, data, at: this.clock.now() });
    try {
      const { answer, actions } = await this.backend.prompt({
        requestId,
        prompt,
        history: [...conversation.turns],
        confirm,
        principal,
        call,
        onToken: (text) => emit('token', { text }),
        onAction: (action) => emit('action', action),
        signal: controller.signal,
      });
      conversation.turns.push({ role: 'user', content: prompt }, { role: 'assistant', content: answer });
      if (conversation.turns.length > MAX_TURNS * 2) conversation.turns.splice(0, conversation.turns.length - MAX_TURNS * 2);
      conversation.updatedAt = this.clock.now();
      emit('answer', { conversationId: conversation.id, answer, actions });
      return { requestId, conversationId: conversation.id, answer, actions };
    } catch (err) {
      // A backend's own failure (its server went away mid-answer) is an upstream failure, not a bug here.
      const failure = err instanceof DomainError ? err : aiErrors.AI_BACKEND_FAILED({ backend: this.backend.name, reason: err instanceof Error ? err.message : String(err) });
      emit('error', { code: failure.code, message: failure.message });
      throw failure;
    } finally {
      this.inflight.delete(controller);
    }
  }

  private emitStatus(): void {
    this.events.emit('ai.event', { type: 'status', requestId: null, userId: null, data: this.status(), at: this.clock.now() });
  }

  /** Conversations past their age go; a user keeps at most 50 (the oldest go first). */
  private prune(): void {
    const now = this.clock.now();
    const perUser = new Map<string, Conversation[]>();
    for (const c of this.conversations.values()) {
      if (now - c.updatedAt > MAX_AGE_MS) this.conversations.delete(c.id);
      else perUser.set(c.userId, [...(perUser.get(c.userId) ?? []), c]);
    }
    for (const list of perUser.values()) {
      if (list.length <= MAX_CONVERSATIONS_PER_USER) continue;
      for (const old of list.sort((a, b) => a.updatedAt - b.updatedAt).slice(0, list.length - MAX_CONVERSATIONS_PER_USER)) this.conversations.delete(old.id);
    }
  }
}
