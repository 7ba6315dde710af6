export {
  IR_FREQ_MAX_KHZ,
  IR_FREQ_MIN_KHZ,
  IR_KEY_MAX_LENGTH,
  IR_KEY_PATTERN,
  IR_MAX_PAIRS,
  IrCommandSchema,
  IrCommandsSchema,
  carrierHz,
  isValidExtenderIp,
  isValidIrKey,
  sendirLine,
  toCarrierCycles,
  validateIrCommand,
  validateIrCommands,
} from './ir-command.js';
export type { IrCommand, IrCommands } from './ir-command.js';
export type { IrTransmission, IrTransmitter } from './transmitter.js';
