import { Type } from 'typebox';
import { defineOperation, OS_ADMIN } from '../../platform/operations.js';
import type { AudienceResolver } from '../access/audience.js';
import type { MediaService } from '../media/media-service.js';
import { MediaPlayerSchema } from '../media/schemas.js';
import type { DeviceService } from '../devices/device-service.js';
import { DeviceSchema, DeviceStateSchema } from '../devices/schemas.js';
import type { ProgramService } from '../programs/program-service.js';
import type { DesignService, PreferencesService } from '../home/preferences.js';
import { LiveDesignSchema, PreferencesSchema, SpaceSchema, ZoneSchema } from '../home/schemas.js';
import type { SpaceService } from '../home/spaces.js';
import type { ZoneService } from '../home/zones.js';

export interface BootstrapSources {
  devices: DeviceService;
  spaces: SpaceService;
  zones: ZoneService;
  programs: ProgramService;
  preferences: PreferencesService;
  design: DesignService;
  media: MediaService;
  audiences: AudienceResolver;
  now(): number;
}

const Bootstrap = Type.Object({
  at: Type.Integer(),
  devices: Type.Array(DeviceSchema),
  spaces: Type.Array(SpaceSchema),
  zones: Type.Array(ZoneSchema),
  programs: Type.Array(Type.Unknown({ description: 'Program records as in GET /programs.' })),
  media: Type.Array(MediaPlayerSchema, { description: 'The media player roster, as GET /media/players answers it for the caller.' }),
  state: Type.Record(Type.String(), DeviceStateSchema),
  preferences: PreferencesSchema,
  design: LiveDesignSchema,
});

/** Everything a client needs to draw its first screen, from memory, in one pass. */
export function bootstrapOperation(src: BootstrapSources) {
  return defineOperation({
    name: 'bootstrap',
    summary: 'One payload with devices, spaces, zones, programs, media, current state, preferences and the live design.',
    access: OS_ADMIN,
    input: Type.Object({}),
    output: Bootstrap,
    async handler(_input, { principal }) {
      const devices = src.devices.list();
      const state: Record<string, ReturnType<DeviceService['state']['get']>> = {};
      for (const device of devices) state[device.id] = { ...src.devices.state.get(device.id), online: device.online };
      return {
        at: src.now(),
        devices: [...devices],
        spaces: src.spaces.list(),
        zones: src.zones.list(),
        programs: src.programs.list().map((p) => src.programs.view(p)),
        media: src.media.players(src.audiences.audienceOf(principal)),
        state,
        preferences: src.preferences.get(),
        design: src.design.live(),
      };
    },
  });
}
