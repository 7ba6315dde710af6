import type { Static, TSchema } from 'typebox';

/**
 * An operation is the one definition of something a client can ask the hub to do: its name,
 * its input and output schemas and its handler. REST routes, hub protocol commands and the
 * legacy App API are bindings of the same operation; none of them redefines it.
 */
export interface Principal {
  userId: string;
  username: string;
  role: 'admin' | 'user';
  scope: string;
  /** Hash of the presenting token, so that logout can revoke exactly that token. */
  tokenHash: string;
}

export interface OperationContext {
  principal?: Principal;
  /** Client network address, for rate limiting and audit. */
  clientAddress: string;
  requestId: string;
}

export type Access = 'public' | 'authenticated';

export interface Operation<I extends TSchema = TSchema, O extends TSchema = TSchema> {
  /** Dotted, stable name such as `auth.login`. */
  readonly name: string;
  readonly summary: string;
  readonly description?: string;
  /** `public` operations run without a principal; everything else requires one. */
  readonly access: Access;
  /** An object schema, or a cyclic one (`$defs` + `$ref`) whose target is an object. */
  readonly input: I;
  readonly output: O;
  handler(input: Static<I>, ctx: OperationContext): Promise<Static<O>>;
}

export function defineOperation<I extends TSchema, O extends TSchema>(op: Operation<I, O>): Operation<I, O> {
  return op;
}

export class OperationRegistry {
  private readonly operations = new Map<string, Operation>();

  register(...ops: Operation[]): void {
    for (const op of ops) {
      if (this.operations.has(op.name)) throw new Error(`operation ${op.name} is defined twice`);
      this.operations.set(op.name, op);
    }
  }

  get(name: string): Operation {
    const op = this.operations.get(name);
    if (!op) throw new Error(`operation ${name} is not registered`);
    return op;
  }

  has(name: string): boolean {
    return this.operations.has(name);
  }

  list(): Operation[] {
    return [...this.operations.values()];
  }
}
