import {
  mdiBattery,
  mdiBell,
  mdiBlindsHorizontal,
  mdiBlur,
  mdiChartLine,
  mdiDevices,
  mdiDoorOpen,
  mdiFan,
  mdiFire,
  mdiFlash,
  mdiGauge,
  mdiGestureTapButton,
  mdiHome,
  mdiLightbulb,
  mdiLock,
  mdiMoleculeCo2,
  mdiMotionSensor,
  mdiPause,
  mdiPlay,
  mdiPowerSocketEu,
  mdiRemote,
  mdiShieldAlert,
  mdiSkipNext,
  mdiSkipPrevious,
  mdiTelevision,
  mdiThermometer,
  mdiThermostat,
  mdiToggleSwitch,
  mdiWater,
  mdiWaterPercent,
  mdiWhiteBalanceSunny,
} from '@mdi/js';
import { html, type Html } from '../web/html.js';

/**
 * The web UI's icons: Material Design Icons (@mdi/js, Apache-2.0) drawn inline as SVG, so that they
 * look the same on every device (emoji depend on the fonts a system has) and take the text colour.
 * Always decorative: the text beside them says the same in words.
 */
const PATHS = {
  light: mdiLightbulb,
  switch: mdiToggleSwitch,
  outlet: mdiPowerSocketEu,
  cover: mdiBlindsHorizontal,
  climate: mdiThermostat,
  fan: mdiFan,
  lock: mdiLock,
  media_player: mdiTelevision,
  remote: mdiRemote,
  button: mdiGestureTapButton,
  sensor: mdiChartLine,
  binary_sensor: mdiBell,
  generic: mdiDevices,
  temperature: mdiThermometer,
  humidity: mdiWaterPercent,
  illuminance: mdiWhiteBalanceSunny,
  power: mdiFlash,
  energy: mdiFlash,
  battery: mdiBattery,
  co2: mdiMoleculeCo2,
  pm25: mdiBlur,
  pressure: mdiGauge,
  motion: mdiMotionSensor,
  occupancy: mdiHome,
  contact: mdiDoorOpen,
  leak: mdiWater,
  smoke: mdiFire,
  tamper: mdiShieldAlert,
  previous: mdiSkipPrevious,
  next: mdiSkipNext,
  play: mdiPlay,
  pause: mdiPause,
} as const;

export type IconName = keyof typeof PATHS;

export const isIconName = (name: string): name is IconName => Object.hasOwn(PATHS, name);

export function icon(name: IconName, className = ''): Html {
  return html`<svg class="icon${className ? ` ${className}` : ''}" viewBox="0 0 24 24" width="24" height="24" aria-hidden="true" focusable="false"><path d="${PATHS[name]}"/></svg>`;
}
