import type { Principal } from '../../platform/operations.js';

export interface AiModel {
  name: string;
  installed: boolean;
  recommended: boolean;
  sizeBytes?: number;
  description?: string;
}

export interface AiAction {
  /** What was asked of the home: an operation name or an intent. */
  kind: string;
  target?: string;
  ok: boolean;
  /** `needs_confirmation`: a destructive action not carried out without `confirm: true`. */
  status: 'done' | 'failed' | 'needs_confirmation';
  detail?: unknown;
}

export interface PromptRequest {
  requestId: string;
  prompt: string;
  /** Earlier turns of the conversation, oldest first. */
  history: Array<{ role: 'user' | 'assistant'; content: string }>;
  confirm: boolean;
  principal: Principal;
  /** Runs an operation under the caller's own credential (the same access rules as the API). */
  call(operation: string, input: Record<string, unknown>): Promise<unknown>;
  onToken(text: string): void;
  onAction(action: AiAction): void;
  signal: AbortSignal;
}

/** A language backend: the local intent engine, an Ollama server, … (docs/ai.md says how to add one). */
export interface AiBackend {
  readonly name: string;
  /** The model it would use (its own name for the intent engine). */
  readonly model: string;
  installed(): boolean;
  modelReady(): boolean;
  health(): Promise<{ reachable: boolean; latencyMs: number; detail?: string }>;
  models(): Promise<AiModel[]>;
  start(): Promise<void>;
  stop(): Promise<void>;
  prompt(request: PromptRequest): Promise<{ answer: string; actions: AiAction[] }>;
  /** Downloads a model, reporting bytes as they come; absent for a backend with nothing to download. */
  pull?(model: string, onProgress: (progress: { completedBytes: number; totalBytes: number; state: string }) => void, signal: AbortSignal): Promise<void>;
  /** Removes the current model. */
  remove?(): Promise<void>;
}
