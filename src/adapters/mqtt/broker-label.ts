/** A broker's URL as the status shows it: scheme, host and port, never its credentials. */
export function brokerLabel(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return 'an invalid URL';
  }
}
