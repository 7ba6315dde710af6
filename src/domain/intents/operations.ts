import { Type } from 'typebox';
import { defineOperation, OS_ADMIN } from '../../platform/operations.js';
import type { IntentEngine } from './engine.js';
import { intentErrors } from './errors.js';

const Language = Type.String({ pattern: '^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$', description: 'Language of the sentence (`en`); default the engine\'s.' });
const Text = Type.String({ minLength: 1, maxLength: 500, description: 'The sentence, as said or typed.' });
const ErrorInfo = Type.Object({ code: Type.String(), message: Type.String() });

const TargetSchema = Type.Object({
  kind: Type.Union([Type.Literal('device'), Type.Literal('space'), Type.Literal('zone'), Type.Literal('program'), Type.Literal('scene'), Type.Literal('macro')]),
  id: Type.String(),
  name: Type.String(),
});

const Slots = Type.Record(Type.String(), Type.Union([Type.String(), Type.Number()]), {
  description: 'Slot values: recognised names, numbers, list values and fixed slots such as `domain`.',
});

const Confidence = Type.Number({
  minimum: 0,
  maximum: 1,
  description: '1 for a full match with exact names; lower for plural, alias (program semantics), partial or inconsistent names, and for ties.',
});

export const ParseReadingSchema = Type.Object({
  intent: Type.String(),
  slots: Slots,
  targets: Type.Array(TargetSchema),
  confidence: Confidence,
  template: Type.String(),
});

export const ParseResultSchema = Type.Object(
  {
    text: Type.String(),
    language: Type.String(),
    matched: Type.Boolean(),
    intent: Type.Optional(Type.String()),
    slots: Slots,
    targets: Type.Array(TargetSchema, { description: 'What the command addresses: the named entity, or the devices of the domain when none is named.' }),
    confidence: Confidence,
    template: Type.Optional(Type.String({ description: 'The sentence template that matched.' })),
    alternatives: Type.Optional(Type.Array(ParseReadingSchema, { description: 'Other plausible readings, best first.' })),
    ambiguous: Type.Optional(Type.Boolean({ description: 'The best reading ties with one addressing something else; execute asks which.' })),
    unresolved: Type.Optional(
      Type.Object(
        { intent: Type.String(), slot: Type.String(), kind: TargetSchema.properties.kind, text: Type.String() },
        { description: 'Not matched, but a template fit except for words that name nothing known.' },
      ),
    ),
  },
  { description: 'How a sentence was understood against the live home graph.' },
);

export const ExecuteResultSchema = Type.Object({
  parse: ParseResultSchema,
  ok: Type.Boolean({ description: 'Everything addressed did what was asked (or the question was answered).' }),
  results: Type.Array(
    Type.Object({
      target: TargetSchema,
      ok: Type.Boolean(),
      detail: Type.Optional(Type.Unknown()),
      error: Type.Optional(ErrorInfo),
    }),
  ),
  speech: Type.String({ description: 'A short spoken-style answer.' }),
});

export function intentOperations(engine: IntentEngine) {
  return {
    parse: defineOperation({
      name: 'intents.parse',
      summary: 'Understand a sentence: intent, slots and targets against the live home graph.',
      description: 'Local template matching (no network, no model). Nothing is executed.',
      access: OS_ADMIN,
      input: Type.Object({ text: Text, language: Type.Optional(Language) }),
      output: ParseResultSchema,
      async handler({ text, language }) {
        return engine.parse(text, language ? { language } : {});
      },
    }),
    execute: defineOperation({
      name: 'intents.execute',
      journal: 'activity',
      summary: 'Understand a sentence and carry it out; answers with per-target results and a spoken-style sentence.',
      description:
        'Fails with 422 INTENT_NOT_UNDERSTOOD (nothing carried out: not understood, unsure, ambiguous or nothing to act on) or INTENT_NOT_CARRIED_OUT (some targets failed); the message is the spoken-style answer and `details` the whole result, with per-target results.',
      access: OS_ADMIN,
      input: Type.Object({ text: Text, language: Type.Optional(Language) }),
      output: ExecuteResultSchema,
      async handler({ text, language }) {
        const result = await engine.execute(engine.parse(text, language ? { language } : {}));
        if (result.ok) return result;
        const failed = result.results.length === 0 ? intentErrors.INTENT_NOT_UNDERSTOOD : intentErrors.INTENT_NOT_CARRIED_OUT;
        throw failed({ speech: result.speech }, { details: result });
      },
    }),
  };
}
