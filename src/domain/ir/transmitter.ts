import type { IrCommand } from './ir-command.js';

/** What an extender confirmed for one transmission. */
export interface IrTransmission {
  /** The line written to the extender, with its terminator. */
  line: string;
  /** The extender's confirmation, without terminator. */
  reply: string;
}

/**
 * The port through which the domain sends IR: like the storage repositories, the domain declares
 * it and an adapter implements it (`src/adapters/itach`, Global Caché iTach over TCP), wired in
 * the composition root. Failures are DomainErrors (IR_EXTENDER_TIMEOUT, IR_EXTENDER_UNREACHABLE…).
 */
export interface IrTransmitter {
  /** Transmits `cmd` through the extender at `extenderIp`; resolves once the extender confirmed. */
  send(extenderIp: string, cmd: IrCommand): Promise<IrTransmission>;
  /** Closes every connection; later sends fail. */
  close(): Promise<void>;
}
