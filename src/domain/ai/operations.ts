import { Type } from 'typebox';
import { ANY_ACCOUNT, defineOperation, OS_ADMIN, type OperationContext, type OperationRegistry } from '../../platform/operations.js';
import type { AiService } from './ai-service.js';
import { aiErrors } from './errors.js';

const Status = Type.Object({
  installed: Type.Boolean(),
  running: Type.Boolean(),
  modelReady: Type.Boolean(),
  backend: Type.String(),
  model: Type.String(),
  progress: Type.Optional(Type.Object({ state: Type.String(), completedBytes: Type.Integer(), totalBytes: Type.Integer(), percent: Type.Number() })),
});

const Action = Type.Object({
  kind: Type.String(),
  target: Type.Optional(Type.String()),
  ok: Type.Boolean(),
  status: Type.Union([Type.Literal('done'), Type.Literal('failed'), Type.Literal('needs_confirmation')]),
  detail: Type.Optional(Type.Unknown()),
});

interface Named {
  name: string;
}

/** The assistant's operations (docs/ai.md). Prompts act through `call`: the caller's own credential, the API's rules. */
export function aiOperations(ai: AiService, registry: OperationRegistry) {
  const callerOf = (ctx: OperationContext) => (operation: string, input: Record<string, unknown>) =>
    registry.invoke(operation, { json: input }, { ...(ctx.credential ? { credential: ctx.credential } : {}), clientAddress: ctx.clientAddress, requestId: ctx.requestId });
  return {
    status: defineOperation({
      name: 'ai.status',
      summary: 'The assistant: installed, running, model ready, backend, model, and download progress while a model is pulled.',
      access: ANY_ACCOUNT,
      input: Type.Object({}),
      output: Status,
      async handler() {
        return ai.status();
      },
    }),
    health: defineOperation({
      name: 'ai.health',
      summary: "Whether the backend is reachable, and how fast it answers.",
      access: ANY_ACCOUNT,
      input: Type.Object({}),
      output: Type.Object({ reachable: Type.Boolean(), latencyMs: Type.Number(), backend: Type.String(), detail: Type.Optional(Type.String()) }),
      async handler() {
        return { ...(await ai.health()), backend: ai.status().backend };
      },
    }),
    models: defineOperation({
      name: 'ai.models',
      summary: "The catalogue: the backend's models and the recommended ones, each marked installed or not.",
      access: OS_ADMIN,
      input: Type.Object({}),
      output: Type.Object({ models: Type.Array(Type.Object({ name: Type.String(), installed: Type.Boolean(), recommended: Type.Boolean(), sizeBytes: Type.Optional(Type.Integer()), description: Type.Optional(Type.String()) })) }),
      async handler() {
        return { models: await ai.models() };
      },
    }),
    install: defineOperation({
      name: 'ai.install',
      summary: 'Install a model: a download that reports its progress on /ai/events (202 at once; 409 while another runs).',
      description: 'Models the backend does not list are 404. The intent engine is built in: its one model `intents` is installed already.',
      access: OS_ADMIN,
      input: Type.Object({ model: Type.String({ minLength: 1, maxLength: 200 }) }),
      output: Type.Object({ model: Type.String(), state: Type.String() }),
      async handler({ model }) {
        const known = (await ai.models()).find((m) => m.name === model);
        if (!known) throw aiErrors.AI_MODEL_UNKNOWN({ backend: ai.status().backend, model });
        return ai.install(model);
      },
    }),
    uninstall: defineOperation({
      name: 'ai.uninstall',
      summary: 'Remove the current model.',
      access: OS_ADMIN,
      input: Type.Object({}),
      output: Status,
      async handler() {
        return ai.uninstall();
      },
    }),
    start: defineOperation({
      name: 'ai.start',
      summary: 'Start the assistant (load the model).',
      access: OS_ADMIN,
      input: Type.Object({}),
      output: Status,
      async handler() {
        return ai.start();
      },
    }),
    stop: defineOperation({
      name: 'ai.stop',
      summary: 'Stop the assistant (unload the model); prompts running are cancelled.',
      access: OS_ADMIN,
      input: Type.Object({}),
      output: Status,
      async handler() {
        return ai.stop();
      },
    }),
    suggestions: defineOperation({
      name: 'ai.suggestions',
      summary: 'Prompts made from the live home the caller sees: its rooms, devices and programs as they are now.',
      access: ANY_ACCOUNT,
      input: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: 8 })) }),
      output: Type.Object({ suggestions: Type.Array(Type.Object({ prompt: Type.String(), about: Type.String() })) }),
      async handler({ limit }, ctx) {
        const call = callerOf(ctx);
        const { devices } = (await call('devices.list', {})) as { devices: Array<Named & { commands: Named[]; online: boolean }> };
        const { spaces } = (await call('spaces.list', {})) as { spaces: Named[] };
        const { programs } = (await call('programs.list', {})) as { programs: Named[] };
        const out: Array<{ prompt: string; about: string }> = [];
        for (const d of devices.filter((x) => x.online)) {
          if (d.commands.some((c) => c.name === 'turn_on')) out.push({ prompt: `Turn on the ${d.name}`, about: 'device' });
          else out.push({ prompt: `What is the ${d.name} doing?`, about: 'device' });
        }
        for (const p of programs) out.push({ prompt: `Run ${p.name}`, about: 'program' });
        for (const s of spaces) out.push({ prompt: `Turn off the lights in the ${s.name}`, about: 'space' });
        return { suggestions: out.slice(0, limit ?? 8) };
      },
    }),
    prompt: defineOperation({
      name: 'ai.prompt',
      summary: 'Ask the assistant: 202 with a requestId (tokens, actions and the answer on /ai/events), or with sync=true 200 with the whole answer and the actions taken.',
      description:
        'At most 4,000 characters (413 PROMPT_TOO_LONG); a stopped assistant 409. A prompt does only what its caller could through the API; a destructive action (unlocking, disarming, deleting) asks for confirmation instead unless `confirm` is true.',
      access: ANY_ACCOUNT,
      input: Type.Object({
        prompt: Type.String({ minLength: 1, maxLength: 100_000 }),
        conversationId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
        confirm: Type.Optional(Type.Boolean()),
        sync: Type.Optional(Type.Boolean({ description: 'Answer when done (200) instead of at once (202).' })),
      }),
      output: Type.Object({
        requestId: Type.String(),
        conversationId: Type.String(),
        status: Type.Union([Type.Literal('accepted'), Type.Literal('answered')]),
        answer: Type.Optional(Type.String()),
        actions: Type.Optional(Type.Array(Action)),
      }),
      async handler({ prompt, conversationId, confirm, sync }, ctx) {
        const principal = ctx.principal!;
        const request = ai.begin(prompt, principal, conversationId);
        const running = ai.run(request, prompt, principal, confirm ?? false, callerOf(ctx));
        if (sync) return { status: 'answered' as const, ...(await running) };
        running.catch(() => undefined);
        return { requestId: request.requestId, conversationId: request.conversation.id, status: 'accepted' as const };
      },
    }),
  };
}
