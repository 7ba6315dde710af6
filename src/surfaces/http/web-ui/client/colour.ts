/**
 * Colour as a light takes it (hue 0–360, saturation 0–100, at full brightness) and as a colour
 * input shows it (`#rrggbb`); used by the tiles on the server and by the page script.
 */

/** Hue and saturation as `#rrggbb`. */
export function hexOf(hue: number | undefined, saturation: number | undefined): string {
  const h = (((hue ?? 0) % 360) + 360) % 360 / 60;
  const c = Math.min(100, Math.max(0, saturation ?? 0)) / 100;
  const x = c * (1 - Math.abs((h % 2) - 1));
  const [r, g, b] = h < 1 ? [c, x, 0] : h < 2 ? [x, c, 0] : h < 3 ? [0, c, x] : h < 4 ? [0, x, c] : h < 5 ? [x, 0, c] : [c, 0, x];
  const channel = (v: number) =>
    Math.round((v + 1 - c) * 255)
      .toString(16)
      .padStart(2, '0');
  return `#${channel(r)}${channel(g)}${channel(b)}`;
}

/** `#rrggbb` as hue and saturation; undefined for anything else. */
export function hueSaturationOf(hex: string): { hue: number; saturation: number } | undefined {
  const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(hex);
  if (!m) return undefined;
  const [r, g, b] = [m[1]!, m[2]!, m[3]!].map((v) => parseInt(v, 16) / 255) as [number, number, number];
  const max = Math.max(r, g, b);
  const delta = max - Math.min(r, g, b);
  let hue = 0;
  if (delta > 0) hue = max === r ? 60 * (((g - b) / delta) % 6) : max === g ? 60 * ((b - r) / delta + 2) : 60 * ((r - g) / delta + 4);
  return { hue: Math.round((hue + 360) % 360), saturation: Math.round(max === 0 ? 0 : (delta / max) * 100) };
}
