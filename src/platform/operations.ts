import type { Static, TSchema } from 'typebox';
import { afterAnswer } from './after-answer.js';
import { DomainError, errors } from './errors.js';
import { InputValidators, type CallInput } from './input-validation.js';

export type { CallInput } from './input-validation.js';

/**
 * An operation is the one definition of something a client can ask the hub to do: its name,
 * its input and output schemas, who may call it, and its handler. REST routes, hub protocol
 * commands, Socket.IO namespaces, SSE streams and the legacy App API reach it through
 * `OperationRegistry.invoke`, the one call path that validates, authorizes, runs and maps
 * failures; none of them redefines it or checks credentials on its own.
 */

/** What a token was issued for. A token carries exactly one. */
export type Scope = 'os_api_admin' | 'app' | 'remote' | 'bridge' | 'plugin-bridge' | 'metrics' | 'mqtt' | 'matter';
export type Role = 'admin' | 'user';
/** `access` tokens authenticate REST and sockets; `stream` tokens only SSE streams. */
export type TokenKind = 'access' | 'stream';

export interface Principal {
  userId: string;
  username: string;
  role: Role;
  scope: string;
  /** Hash of the presenting token, so that logout can revoke exactly that token. */
  tokenHash: string;
  /** Set when a paired remote controller presents its token (scope `remote`): which remote calls. */
  remoteId?: string;
}

/**
 * Who may call an operation: anyone (`public`), or a principal whose token has one of `scopes`
 * and, when `roles` is given, whose account has one of them.
 */
export type Access = 'public' | { readonly scopes: readonly Scope[]; readonly roles?: readonly Role[] };

export interface OperationContext {
  principal?: Principal;
  /** The credential the caller presented: an operation that acts for its caller (the assistant) calls others with it, under the same rules. */
  credential?: Credential;
  /** Client network address, for rate limiting and audit. */
  clientAddress: string;
  requestId: string;
}

export interface Operation<I extends TSchema = TSchema, O extends TSchema = TSchema, N extends string = string> {
  /** Dotted, stable name such as `auth.login`. */
  readonly name: N;
  readonly summary: string;
  readonly description?: string;
  readonly access: Access;
  /**
   * `activity`: a call that uses the home rather than administers it (a device command, a scene
   * run, a key press). Every such call, from any account and any surface, goes to the activity
   * log; the admins' audit trail keeps the rest of their changes. See docs/activity.md.
   */
  readonly journal?: 'activity';
  /** An object schema, or a cyclic one (`$defs` + `$ref`) whose target is an object. */
  readonly input: I;
  readonly output: O;
  /**
   * Does the work. A handler that needs nothing asynchronous may answer at once (a value, not a
   * promise): the surfaces then answer in the same turn (`OperationRegistry.call`).
   */
  handler(input: Static<I>, ctx: OperationContext): Promise<Static<O>> | Static<O>;
}

export function defineOperation<I extends TSchema, O extends TSchema, const N extends string>(op: Operation<I, O, N>): Operation<I, O, N> {
  return op;
}

/** A credential as a surface received it; the registry resolves and checks it. */
export interface Credential {
  token: string;
  /** Token kinds this surface takes: only SSE streams take `stream` tokens (CONTRACT). */
  kinds?: readonly TokenKind[];
  /**
   * The token scopes the API it was presented to admits, like a token audience: an `app`
   * token presented to the OS API is refused there even for an operation that app users may
   * run through the App API.
   */
  admits?: readonly Scope[];
}

export interface Caller {
  credential?: Credential;
  clientAddress: string;
  requestId: string;
  /** What the surface's request means to do (a GET reads, a POST/DELETE changes); changes are what an audit trail records. */
  intent?: 'read' | 'change';
}

/** A finished call, as observers (the audit trail) see it: after it ran, whether it succeeded or failed. */
export interface CallRecord {
  operation: string;
  /** The operation's `journal`: `activity` for uses of the home, `audit` for everything else. */
  journal: 'audit' | 'activity';
  principal?: Principal;
  caller: Caller;
  /** The input as validated (when it got that far). */
  input?: unknown;
  /** Path parameters and other text parts of the call (an id names the target). */
  target?: Record<string, unknown>;
  ok: boolean;
  /** The failure's code when it failed. */
  code?: string;
}

/** What a call is, before its outcome: the part of a CallRecord known when it starts. */
type CallAbout = Pick<CallRecord, 'operation' | 'journal' | 'principal' | 'caller' | 'target'>;

/** Resolves a token to its principal; the auth service implements it. */
export interface Authenticator {
  authenticate(token: string, kinds: readonly TokenKind[]): Principal | undefined;
}

/**
 * Asks each authenticator in turn and takes the first principal: account tokens and paired
 * remotes' tokens live in different services, yet one registry authenticates both.
 */
export function firstAuthenticator(...authenticators: readonly Authenticator[]): Authenticator {
  return {
    authenticate(token, kinds) {
      for (const authenticator of authenticators) {
        const principal = authenticator.authenticate(token, kinds);
        if (principal) return principal;
      }
      return undefined;
    },
  };
}

export interface OperationLogger {
  error(obj: object, msg: string): void;
}

const ACCESS_ONLY: readonly TokenKind[] = ['access'];

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return value !== null && (typeof value === 'object' || typeof value === 'function') && typeof (value as { then?: unknown }).then === 'function';
}

export class OperationRegistry {
  private readonly operations = new Map<string, Operation>();
  private readonly validators = new InputValidators();
  private observers: Array<(record: CallRecord) => void> = [];

  /** Calls `observer` after every call a surface marked as a change, and every call of an `activity` operation; returns the way to stop. */
  observeChanges(observer: (record: CallRecord) => void): () => void {
    this.observers.push(observer);
    return () => {
      this.observers = this.observers.filter((o) => o !== observer);
    };
  }

  private notify(record: CallRecord): void {
    for (const observer of this.observers) {
      try {
        observer(record);
      } catch (err) {
        this.log.error({ err, operation: record.operation }, 'call observer failed');
      }
    }
  }

  constructor(
    private readonly authenticator: Authenticator,
    private readonly log: OperationLogger,
  ) {}

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

  /** Compiles every operation's validators now (they are otherwise compiled on first call); throws on a bad schema. */
  compileAll(): void {
    for (const op of this.operations.values()) this.validators.compile(op);
  }

  /**
   * The one entry point: authenticates the caller, checks the operation's access rule,
   * validates the input (coercing only what arrived as text), runs the handler and turns any
   * failure into a DomainError. An unexpected failure is logged here, once, with its stack.
   */
  async invoke(name: string, input: CallInput, caller: Caller): Promise<unknown> {
    return this.call(name, input, caller);
  }

  /**
   * `invoke`, answering in the same turn when the handler did (a value rather than a promise):
   * a hot read (`auth.me`, the device list) is answered without a trip through the microtask
   * queue. Failures are thrown, or rejected when the handler's promise is, as DomainErrors.
   */
  call(name: string, input: CallInput, caller: Caller): unknown {
    const op = this.operations.get(name);
    if (!op) throw errors.UNKNOWN_OPERATION({ name });
    const principal = this.authorize(op.access, caller.credential);
    const journal: CallRecord['journal'] = op.journal ?? 'audit';
    // What observers are told of the call, when there are any and the call is theirs.
    const about: CallAbout | undefined =
      (caller.intent === 'change' || journal === 'activity') && this.observers.length > 0 ? { operation: op.name, journal, principal, caller, target: input.text?.params } : undefined;
    let value: unknown;
    let result: unknown;
    try {
      value = this.validators.validate(op, input);
      // Two literals rather than a conditional spread: the same context, without the throwaway object.
      const ctx: OperationContext = caller.credential
        ? { principal, credential: caller.credential, clientAddress: caller.clientAddress, requestId: caller.requestId }
        : { principal, clientAddress: caller.clientAddress, requestId: caller.requestId };
      result = op.handler(value as never, ctx);
    } catch (err) {
      const thrown = this.failed(op.name, caller, err);
      if (about) this.tell(about, false, value, thrown.code);
      throw thrown;
    }
    if (isThenable(result)) {
      if (!about) {
        return result.then(undefined, (err: unknown) => {
          throw this.failed(op.name, caller, err);
        });
      }
      return result.then(
        (answer) => {
          this.tell(about, true, value);
          return answer;
        },
        (err: unknown) => {
          const thrown = this.failed(op.name, caller, err);
          this.tell(about, false, value, thrown.code);
          throw thrown;
        },
      );
    }
    if (about) this.tell(about, true, value);
    return result;
  }

  /**
   * Tells the observers of a call. A use of the home (`journal: 'activity'`) is recorded after
   * its answer is sent: at one connection the recording would otherwise sit between the driver's
   * answer and the reply. Administration is told at once, in the turn its change was made.
   */
  private tell(about: CallAbout, ok: boolean, value: unknown, code?: string): void {
    if (about.journal === 'activity') afterAnswer(() => this.tellNow(about, ok, value, code));
    else this.tellNow(about, ok, value, code);
  }

  private tellNow(about: CallAbout, ok: boolean, value: unknown, code?: string): void {
    // Built field by field, in the order the spreads of `about` gave (operation, journal,
    // principal, caller, input, target, ok, code): the same record, without the rest object and
    // the spread copies every recorded command paid for.
    const record: CallRecord = { operation: about.operation, journal: about.journal, principal: about.principal, caller: about.caller } as CallRecord;
    if (value !== undefined) record.input = value;
    if (about.target) record.target = about.target;
    record.ok = ok;
    if (code !== undefined) record.code = code;
    this.notify(record);
  }

  /** A call's failure as the DomainError to throw, logged when it was unexpected. */
  private failed(operation: string, caller: Caller, err: unknown): DomainError {
    if (err instanceof DomainError) return err;
    this.log.error({ err, operation, requestId: caller.requestId }, 'operation failed unexpectedly');
    return errors.INTERNAL_ERROR({}, { cause: err, logged: true });
  }

  /**
   * The authentication step alone, for surfaces that admit a connection before any operation
   * runs (a Socket.IO handshake): the same checks `invoke` makes of an operation's caller.
   */
  authenticate(credential: Credential | undefined): Principal {
    if (!credential?.token) throw errors.AUTH_REQUIRED({});
    const principal = this.authenticator.authenticate(credential.token, credential.kinds ?? ACCESS_ONLY);
    if (!principal) throw errors.INVALID_TOKEN({});
    if (credential.admits && !credential.admits.includes(principal.scope as Scope)) {
      throw errors.INSUFFICIENT_SCOPE({ scopes: credential.admits.join(' or ') });
    }
    return principal;
  }

  /** Whether a credential a live connection was admitted with would still be admitted now. */
  stillAuthenticates(credential: Credential | undefined): boolean {
    try {
      this.authenticate(credential);
      return true;
    } catch {
      return false;
    }
  }

  private authorize(access: Access, credential: Credential | undefined): Principal | undefined {
    if (access === 'public') return undefined;
    const principal = this.authenticate(credential);
    if (!access.scopes.includes(principal.scope as Scope)) throw errors.INSUFFICIENT_SCOPE({ scopes: access.scopes.join(' or ') });
    if (access.roles && !access.roles.includes(principal.role)) throw errors.ROLE_REQUIRED({ roles: access.roles.join(' or ') });
    return principal;
  }
}

/** Household administration: everything the OS API, its sockets and its streams offer. */
export const OS_ADMIN: Access = { scopes: ['os_api_admin'] };
/** Any signed-in account, whichever app it signed in from. */
export const ANY_ACCOUNT: Access = { scopes: ['os_api_admin', 'app'] };
/**
 * Administering the home (creating, changing, removing programs, sequences…) from whichever app
 * the account signed in from: an app user's token is admitted and then refused for its role
 * (403 ROLE_REQUIRED), not for its scope, so the App API can say what is missing.
 */
export const ADMIN_FROM_ANY_APP: Access = { scopes: ANY_ACCOUNT.scopes, roles: ['admin'] };
/** The admin panel's: an admin account's token or session. */
export const ADMIN_ACCOUNT: Access = { scopes: ['os_api_admin'], roles: ['admin'] };
