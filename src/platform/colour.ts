/**
 * Colour conversions the integrations need (MQTT lights, the Matter bridge): the hub speaks hue/saturation (docs/devices.md), many
 * Zigbee bulbs speak CIE xy and some firmwares RGB. The formulas are the usual sRGB ones (Philips
 * Hue's developer notes, Home Assistant's color_util): gamma-corrected sRGB ↔ XYZ (D65) ↔ xy.
 */

export interface Hs {
  /** 0–360 */
  hue: number;
  /** 0–100 */
  saturation: number;
}

const clamp01 = (v: number) => Math.max(0, Math.min(1, v));
const round1 = (v: number) => Math.round(v * 10) / 10;

/** Full-brightness RGB (0–255 each) of a hue and saturation. */
export function hsToRgb({ hue, saturation }: Hs): [number, number, number] {
  const h = (((hue % 360) + 360) % 360) / 60;
  const s = clamp01(saturation / 100);
  const c = s;
  const x = c * (1 - Math.abs((h % 2) - 1));
  const m = 1 - c;
  const [r, g, b] = h < 1 ? [c, x, 0] : h < 2 ? [x, c, 0] : h < 3 ? [0, c, x] : h < 4 ? [0, x, c] : h < 5 ? [x, 0, c] : [c, 0, x];
  return [Math.round((r + m) * 255), Math.round((g + m) * 255), Math.round((b + m) * 255)];
}

/** Hue and saturation of an RGB colour (its brightness is dropped). */
export function rgbToHs(r: number, g: number, b: number): Hs {
  const [rn, gn, bn] = [r, g, b].map((v) => clamp01(v / 255)) as [number, number, number];
  const max = Math.max(rn, gn, bn);
  const min = Math.min(rn, gn, bn);
  const delta = max - min;
  let hue = 0;
  if (delta > 0) {
    if (max === rn) hue = 60 * (((gn - bn) / delta) % 6);
    else if (max === gn) hue = 60 * ((bn - rn) / delta + 2);
    else hue = 60 * ((rn - gn) / delta + 4);
  }
  if (hue < 0) hue += 360;
  return { hue: round1(hue), saturation: round1(max === 0 ? 0 : (delta / max) * 100) };
}

const toLinear = (v: number) => (v > 0.04045 ? ((v + 0.055) / 1.055) ** 2.4 : v / 12.92);
const fromLinear = (v: number) => (v <= 0.0031308 ? 12.92 * v : 1.055 * v ** (1 / 2.4) - 0.055);

/** CIE 1931 xy of a hue and saturation. */
export function hsToXy(hs: Hs): { x: number; y: number } {
  const [r, g, b] = hsToRgb(hs).map((v) => toLinear(v / 255)) as [number, number, number];
  const X = r * 0.4124 + g * 0.3576 + b * 0.1805;
  const Y = r * 0.2126 + g * 0.7152 + b * 0.0722;
  const Z = r * 0.0193 + g * 0.1192 + b * 0.9505;
  const sum = X + Y + Z;
  if (sum === 0) return { x: 0.3127, y: 0.329 };
  return { x: Math.round((X / sum) * 10000) / 10000, y: Math.round((Y / sum) * 10000) / 10000 };
}

/** Hue and saturation of a CIE 1931 xy colour (at full brightness). */
export function xyToHs(x: number, y: number): Hs {
  if (!(y > 0)) return { hue: 0, saturation: 0 };
  const Y = 1;
  const X = (Y / y) * x;
  const Z = (Y / y) * (1 - x - y);
  let r = X * 3.2406 - Y * 1.5372 - Z * 0.4986;
  let g = -X * 0.9689 + Y * 1.8758 + Z * 0.0415;
  let b = X * 0.0557 - Y * 0.204 + Z * 1.057;
  // Outside the sRGB gamut: scale down to the largest component, as the lamps themselves do.
  const max = Math.max(r, g, b);
  if (max > 1) [r, g, b] = [r / max, g / max, b / max];
  return rgbToHs(fromLinear(Math.max(0, r)) * 255, fromLinear(Math.max(0, g)) * 255, fromLinear(Math.max(0, b)) * 255);
}
