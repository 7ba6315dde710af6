import QRCode from 'qrcode';

/** A pairing QR code as an SVG image (the `qrcode` library): what a phone's home app scans. */
export async function qrImage(payload: string): Promise<string> {
  const svg = await QRCode.toString(payload, { type: 'svg', margin: 2, errorCorrectionLevel: 'M' });
  return `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`;
}
