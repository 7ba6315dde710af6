import { defineModule } from '../../platform/module.js';
import type { IrTransmitter } from './transmitter.js';

/**
 * IR sending: the transmitter the composition root chose (the iTach adapter), owned here so that
 * its connections close with the hub. Devices send through it; it has no operations of its own.
 */
export function irModule(transmitter: IrTransmitter) {
  return defineModule({
    name: 'ir',
    needs: [],
    transmitter,
    operations: {},
    async stop() {
      await transmitter.close();
    },
  });
}
