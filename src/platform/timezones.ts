/** True for a zone name `Intl` knows (IANA, e.g. "Europe/Berlin", or "UTC"). */
export function isValidTimezone(timezone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    return true;
  } catch {
    return false;
  }
}
