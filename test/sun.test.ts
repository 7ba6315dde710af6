import { describe, it, expect } from 'vitest';
import { getTimes } from 'suncalc';
import { nextSunEvent, previousSunEvent, sunEventOn, sunWindowHolds } from '../src/domain/automations/sun.js';
import type { HomeLocation, SunEvent } from '../src/domain/automations/sun.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** The wall clock of `t` in `timezone`, as `YYYY-MM-DD HH:MM:SS`. */
function wall(t: number | undefined, timezone: string): string | undefined {
  return t === undefined ? undefined : new Date(t).toLocaleString('sv-SE', { timeZone: timezone });
}

function localDate(t: number | undefined, timezone: string): string | undefined {
  return wall(t, timezone)?.slice(0, 10);
}

// Places as the U.S. Naval Observatory's tables give them (degrees and minutes).
const sanFrancisco: HomeLocation = { latitude: 37 + 46 / 60, longitude: -(122 + 26 / 60), timezone: 'America/Los_Angeles' };
const fredonia: HomeLocation = { latitude: 36 + 57 / 60, longitude: -(112 + 31 / 60), timezone: 'America/Phoenix' };
const atlanta: HomeLocation = { latitude: 33.8, longitude: -84.4, timezone: 'America/New_York' };
const auckland: HomeLocation = { latitude: -36.85, longitude: 174.76, timezone: 'Pacific/Auckland' };
const tromso: HomeLocation = { latitude: 69.6492, longitude: 18.9553, timezone: 'Europe/Oslo' };

/**
 * Published almanac values: U.S. Naval Observatory, Astronomical Applications Dept., "Rise and
 * Set for the Sun" one-year tables, in the zone's standard time (the tables say "add one hour for
 * daylight time, if and when in use"; Arizona keeps none):
 *  - SAN FRANCISCO, CALIFORNIA, W122 26 N37 46, 2012, Pacific Standard Time (UTC-8):
 *    Jan 1 rise 0725 set 1701; Jun 21 rise 0448 set 1935; Dec 21 rise 0722 set 1655.
 *  - FREDONIA, AZ, W112 31 N36 57, 2023, zone 7h west of Greenwich (UTC-7):
 *    Jun 21 rise 0511 set 1953; Sep 22 rise 0618 set 1827; Dec 21 rise 0739 set 1717 (the whole
 *    year is checked below).
 * The requirement is agreement within 2 minutes on any day. suncalc 1.9.0 ran 1 to 2.8 minutes
 * late against these tables (its simplified equation of time, mourner/suncalc#164 and #57) and
 * missed on some days (Fredonia 2023-09-22 sunset by 2.4 minutes); suncalc 2 is within 0.55
 * minutes of every value here, which is the tables' own rounding to the whole minute.
 */
const almanac: Array<{ place: string; location: HomeLocation; date: string; utcOffsetHours: number; rise: string; set: string }> = [
  { place: 'San Francisco', location: sanFrancisco, date: '2012-01-01', utcOffsetHours: -8, rise: '07:25', set: '17:01' },
  { place: 'San Francisco', location: sanFrancisco, date: '2012-06-21', utcOffsetHours: -8, rise: '04:48', set: '19:35' },
  { place: 'San Francisco', location: sanFrancisco, date: '2012-12-21', utcOffsetHours: -8, rise: '07:22', set: '16:55' },
  { place: 'Fredonia', location: fredonia, date: '2023-06-21', utcOffsetHours: -7, rise: '05:11', set: '19:53' },
  { place: 'Fredonia', location: fredonia, date: '2023-09-22', utcOffsetHours: -7, rise: '06:18', set: '18:27' },
  { place: 'Fredonia', location: fredonia, date: '2023-12-21', utcOffsetHours: -7, rise: '07:39', set: '17:17' },
];

/**
 * The whole USNO table for Fredonia, 2023 (aa.usno.navy.mil/calculated/rstt/year?ID=AA&year=2023
 * &task=0&lat=36.95&lon=-112.52&label=Fredonia%2C+AZ&tz=7&tz_sign=-1), UTC-7, as printed: a row
 * per day of the month, then rise and set (hhmm) for January to December, blank where the month
 * has no such day. suncalc 1.9.0 missed 2 minutes on 68 of its 730 values (up to 2.8 minutes,
 * the August and September sunsets); suncalc 2 is within 0.54 minutes on every one.
 */
const fredonia2023 = `
01  0743 1724  0733 1755  0701 1824  0616 1852  0536 1919  0512 1944  0514 1954  0535 1937  0601 1859  0625 1814  0654 1733  0724 1714
02  0743 1725  0732 1756  0700 1825  0615 1853  0535 1920  0512 1945  0515 1953  0536 1936  0602 1857  0626 1812  0655 1732  0725 1713
03  0744 1726  0731 1757  0658 1826  0613 1854  0534 1921  0512 1945  0515 1953  0537 1935  0602 1856  0627 1811  0656 1731  0726 1713
04  0744 1727  0730 1758  0657 1827  0612 1855  0533 1922  0511 1946  0516 1953  0538 1934  0603 1854  0628 1809  0657 1730  0727 1713
05  0744 1728  0729 1759  0656 1828  0610 1856  0532 1922  0511 1946  0516 1953  0539 1933  0604 1853  0629 1808  0658 1729  0728 1713
06  0744 1728  0728 1801  0654 1829  0609 1857  0531 1923  0511 1947  0517 1953  0539 1932  0605 1851  0630 1806  0659 1728  0729 1713
07  0744 1729  0727 1802  0653 1830  0607 1858  0530 1924  0511 1948  0517 1953  0540 1931  0606 1850  0630 1805  0700 1727  0730 1713
08  0744 1730  0726 1803  0651 1831  0606 1859  0529 1925  0510 1948  0518 1952  0541 1930  0607 1848  0631 1803  0701 1726  0731 1713
09  0743 1731  0725 1804  0650 1832  0604 1859  0528 1926  0510 1949  0519 1952  0542 1929  0607 1847  0632 1802  0702 1725  0731 1713
10  0743 1732  0724 1805  0648 1833  0603 1900  0527 1927  0510 1949  0519 1952  0543 1928  0608 1845  0633 1800  0703 1724  0732 1713
11  0743 1733  0723 1806  0647 1834  0602 1901  0526 1928  0510 1950  0520 1951  0544 1926  0609 1844  0634 1759  0704 1724  0733 1714
12  0743 1734  0722 1807  0646 1835  0600 1902  0525 1929  0510 1950  0520 1951  0544 1925  0610 1842  0635 1758  0705 1723  0734 1714
13  0743 1735  0721 1808  0644 1835  0559 1903  0524 1929  0510 1950  0521 1950  0545 1924  0611 1841  0636 1756  0706 1722  0734 1714
14  0743 1736  0720 1809  0643 1836  0557 1904  0523 1930  0510 1951  0522 1950  0546 1923  0611 1839  0637 1755  0707 1721  0735 1714
15  0742 1737  0719 1810  0641 1837  0556 1905  0522 1931  0510 1951  0522 1949  0547 1922  0612 1838  0638 1754  0708 1721  0736 1715
16  0742 1738  0718 1811  0640 1838  0555 1906  0521 1932  0510 1952  0523 1949  0548 1920  0613 1836  0639 1752  0709 1720  0736 1715
17  0742 1739  0716 1812  0638 1839  0553 1906  0521 1933  0510 1952  0524 1948  0549 1919  0614 1835  0639 1751  0710 1719  0737 1715
18  0741 1740  0715 1813  0637 1840  0552 1907  0520 1934  0510 1952  0525 1948  0549 1918  0615 1833  0640 1750  0712 1719  0738 1716
19  0741 1741  0714 1814  0635 1841  0551 1908  0519 1934  0511 1952  0525 1947  0550 1917  0615 1832  0641 1748  0713 1718  0738 1716
20  0740 1742  0713 1815  0634 1842  0549 1909  0518 1935  0511 1953  0526 1947  0551 1915  0616 1830  0642 1747  0714 1717  0739 1716
21  0740 1743  0711 1816  0632 1843  0548 1910  0518 1936  0511 1953  0527 1946  0552 1914  0617 1829  0643 1746  0715 1717  0739 1717
22  0739 1744  0710 1817  0631 1844  0547 1911  0517 1937  0511 1953  0527 1945  0553 1913  0618 1827  0644 1744  0716 1716  0740 1717
23  0739 1745  0709 1818  0629 1844  0546 1912  0517 1938  0511 1953  0528 1945  0554 1911  0619 1826  0645 1743  0717 1716  0740 1718
24  0738 1746  0708 1819  0628 1845  0544 1913  0516 1938  0512 1953  0529 1944  0554 1910  0619 1824  0646 1742  0718 1716  0741 1719
25  0738 1748  0706 1820  0626 1846  0543 1914  0515 1939  0512 1954  0530 1943  0555 1909  0620 1823  0647 1741  0719 1715  0741 1719
26  0737 1749  0705 1821  0625 1847  0542 1914  0515 1940  0512 1954  0531 1942  0556 1907  0621 1821  0648 1740  0720 1715  0742 1720
27  0736 1750  0704 1822  0623 1848  0541 1915  0514 1941  0513 1954  0531 1941  0557 1906  0622 1820  0649 1738  0721 1715  0742 1720
28  0736 1751  0702 1823  0622 1849  0539 1916  0514 1941  0513 1954  0532 1941  0558 1904  0623 1818  0650 1737  0722 1714  0742 1721
29  0735 1752             0620 1850  0538 1917  0513 1942  0513 1954  0533 1940  0558 1903  0624 1817  0651 1736  0723 1714  0743 1722
30  0734 1753             0619 1851  0537 1918  0513 1943  0514 1954  0534 1939  0559 1902  0624 1815  0652 1735  0723 1714  0743 1722
31  0733 1754             0617 1852             0513 1943             0535 1938  0600 1900             0653 1734             0743 1723
`;

/** The rows of a USNO one-year table: date, rise and set (`HH:MM`). */
function usnoYear(year: number, table: string): Array<{ date: string; rise: string; set: string }> {
  const rows: Array<{ date: string; rise: string; set: string }> = [];
  const hhmm = (cell: string) => `${cell.slice(0, 2)}:${cell.slice(2)}`;
  for (const line of table.split('\n').filter((text) => text.trim() !== '')) {
    const day = line.slice(0, 2);
    for (let month = 0; month < 12; month += 1) {
      const [rise, set] = line.slice(4 + month * 11, 13 + month * 11).trim().split(/\s+/);
      if (!rise || !set) continue;
      rows.push({ date: `${year}-${String(month + 1).padStart(2, '0')}-${day}`, rise: hhmm(rise), set: hhmm(set) });
    }
  }
  return rows;
}

/** The instant of `hhmm` on `date` at a fixed UTC offset (the almanac's standard time). */
function atOffset(date: string, hhmm: string, utcOffsetHours: number): number {
  const [h, m] = hhmm.split(':').map(Number) as [number, number];
  return Date.parse(`${date}T00:00:00Z`) + (h * 60 + m) * MINUTE - utcOffsetHours * HOUR;
}

describe('sunEventOn', () => {
  it.each(almanac)('matches the USNO table for $place on $date within 2 minutes', ({ location, date, utcOffsetHours, rise, set }) => {
    const noon = atOffset(date, '12:00', utcOffsetHours);
    const sunrise = sunEventOn('sunrise', noon, location);
    const sunset = sunEventOn('sunset', noon, location);
    expect(Math.abs(sunrise! - atOffset(date, rise, utcOffsetHours))).toBeLessThanOrEqual(2 * MINUTE);
    expect(Math.abs(sunset! - atOffset(date, set, utcOffsetHours))).toBeLessThanOrEqual(2 * MINUTE);
    expect(localDate(sunrise, location.timezone)).toBe(date);
    expect(localDate(sunset, location.timezone)).toBe(date);
  });

  it('matches every day of the USNO 2023 table for Fredonia within 2 minutes', () => {
    const rows = usnoYear(2023, fredonia2023);
    expect(rows).toHaveLength(365);
    const misses: string[] = [];
    for (const { date, rise, set } of rows) {
      const noon = atOffset(date, '12:00', -7);
      for (const [event, hhmm] of [['sunrise', rise], ['sunset', set]] as const) {
        const time = sunEventOn(event, noon, fredonia);
        const off = time === undefined ? Number.NaN : (time - atOffset(date, hhmm, -7)) / MINUTE;
        if (!(Math.abs(off) <= 2)) misses.push(`${date} ${event} ${hhmm}: ${off.toFixed(2)} min`);
      }
    }
    expect(misses).toEqual([]);
  });

  it('maps dawn and dusk to civil twilight (USNO, Atlanta, 2009-09-06, EDT)', () => {
    // USNO "Complete Sun and Moon Data for One Day", quoted in the PyEphem documentation
    // (rhodesmill.org/pyephem/rise-set.html): begin civil twilight 6:50 a.m., sunrise 7:15 a.m.,
    // sunset 7:56 p.m., end civil twilight 8:21 p.m. Within 2 minutes, this also checks the event
    // mapping (nautical twilight would be ~30 minutes away). suncalc 1.9.0 was 1.2 to 2.5 minutes
    // late here (sunset +2.2, dusk +2.5); suncalc 2 is within 0.41 minutes.
    const day = Date.parse('2009-09-06T12:00:00-04:00');
    const expected: Record<SunEvent, string> = { dawn: '06:50', sunrise: '07:15', sunset: '19:56', dusk: '20:21' };
    for (const [event, hhmm] of Object.entries(expected) as Array<[SunEvent, string]>) {
      const time = sunEventOn(event, day, atlanta);
      expect(Math.abs(time! - Date.parse(`2009-09-06T${hhmm}:00-04:00`))).toBeLessThanOrEqual(2 * MINUTE);
    }
  });

  it('answers for the local calendar day west of Greenwich, where the sunset is on the next UTC day', () => {
    // San Francisco, 2012-01-01: the 17:02 PST sunset is 01:02 UTC on 2 January.
    const early = Date.parse('2012-01-01T00:30:00-08:00'); // still 1 January in UTC
    const late = Date.parse('2012-01-01T23:30:00-08:00'); // already 2 January in UTC
    const sunset = sunEventOn('sunset', early, sanFrancisco);
    expect(new Date(sunset!).toISOString().slice(0, 10)).toBe('2012-01-02');
    expect(localDate(sunset, sanFrancisco.timezone)).toBe('2012-01-01');
    expect(sunEventOn('sunset', late, sanFrancisco)).toBe(sunset);
    expect(localDate(sunEventOn('sunrise', late, sanFrancisco), sanFrancisco.timezone)).toBe('2012-01-01');
  });

  it('answers for the local calendar day in Auckland (UTC+13), where the sunrise is on the previous UTC day', () => {
    // Royal Astronomical Society of New Zealand, "Sun Rise and Set in New Zealand" (rasnz.org.nz):
    // Auckland, 1 January, rise 06:05, set 20:43 NZDT. The table is for any year ("times will not
    // vary by more than a minute or two on the same date from year to year"); for 2026 suncalc 2
    // is within 0.41 minutes of it (suncalc 1.9.0 was 1.2 and 1.5 minutes late).
    const lateInTheDay = Date.parse('2026-01-01T23:30:00+13:00'); // 10:30 UTC on 1 January
    const earlyInTheDay = Date.parse('2026-01-01T00:30:00+13:00'); // 11:30 UTC on 31 December
    const sunrise = sunEventOn('sunrise', lateInTheDay, auckland);
    const sunset = sunEventOn('sunset', lateInTheDay, auckland);
    expect(Math.abs(sunrise! - Date.parse('2026-01-01T06:05:00+13:00'))).toBeLessThanOrEqual(2 * MINUTE);
    expect(Math.abs(sunset! - Date.parse('2026-01-01T20:43:00+13:00'))).toBeLessThanOrEqual(2 * MINUTE);
    expect(new Date(sunrise!).toISOString().slice(0, 10)).toBe('2025-12-31');
    expect(sunEventOn('sunrise', earlyInTheDay, auckland)).toBe(sunrise);
    expect(sunEventOn('sunset', earlyInTheDay, auckland)).toBe(sunset);
    // What asking suncalc with the instant itself gives early in the day: the solar noon nearest
    // 11:30 UTC on 31 December is that day's, so the sunrise of the previous local day.
    const naive = getTimes(new Date(earlyInTheDay), auckland.latitude, auckland.longitude).sunrise!.getTime();
    expect(localDate(naive, auckland.timezone)).toBe('2025-12-31');
  });

  it('is undefined in the polar night (Tromsø, 2026-12-21), while civil twilight still happens', () => {
    const day = Date.parse('2026-12-21T12:00:00+01:00');
    expect(sunEventOn('sunrise', day, tromso)).toBeUndefined();
    expect(sunEventOn('sunset', day, tromso)).toBeUndefined();
    expect(localDate(sunEventOn('dawn', day, tromso), tromso.timezone)).toBe('2026-12-21');
    expect(localDate(sunEventOn('dusk', day, tromso), tromso.timezone)).toBe('2026-12-21');
    expect(sunEventOn('sunrise', Number.NaN, tromso)).toBeUndefined();
  });
});

describe('nextSunEvent', () => {
  const sunset = sunEventOn('sunset', Date.parse('2012-06-21T12:00:00-07:00'), sanFrancisco)!;
  const nextDaySunset = sunEventOn('sunset', Date.parse('2012-06-22T12:00:00-07:00'), sanFrancisco)!;

  it('applies a negative offset: 30 minutes before sunset, today while it is ahead, else tomorrow', () => {
    const offset = -30 * MINUTE;
    expect(nextSunEvent('sunset', offset, sunset - 31 * MINUTE, sanFrancisco)).toBe(sunset + offset);
    // Strictly after: at the moment itself, the next one is tomorrow's.
    expect(nextSunEvent('sunset', offset, sunset + offset, sanFrancisco)).toBe(nextDaySunset + offset);
    // Past the offset moment but before the sunset itself: also tomorrow's.
    expect(nextSunEvent('sunset', offset, sunset - 10 * MINUTE, sanFrancisco)).toBe(nextDaySunset + offset);
  });

  it('applies a positive offset: 45 minutes after sunrise, still today after the sunrise itself', () => {
    const sunrise = sunEventOn('sunrise', Date.parse('2012-06-21T12:00:00-07:00'), sanFrancisco)!;
    const offset = 45 * MINUTE;
    expect(nextSunEvent('sunrise', offset, sunrise + 10 * MINUTE, sanFrancisco)).toBe(sunrise + offset);
    expect(nextSunEvent('sunrise', 0, sunrise + 10 * MINUTE, sanFrancisco)).toBe(sunEventOn('sunrise', Date.parse('2012-06-22T12:00:00-07:00'), sanFrancisco));
  });

  it('takes an offset that moves the moment into another local day', () => {
    // Eight hours before sunrise is the previous evening.
    const offset = -8 * HOUR;
    const after = Date.parse('2012-06-21T22:00:00-07:00');
    const sunrise22 = sunEventOn('sunrise', Date.parse('2012-06-22T12:00:00-07:00'), sanFrancisco)!;
    const sunrise23 = sunEventOn('sunrise', Date.parse('2012-06-23T12:00:00-07:00'), sanFrancisco)!;
    expect(sunrise22 + offset).toBeLessThan(after);
    expect(nextSunEvent('sunrise', offset, after, sanFrancisco)).toBe(sunrise23 + offset);
    expect(nextSunEvent('sunrise', offset, after - 2 * HOUR, sanFrancisco)).toBe(sunrise22 + offset);
  });

  it('skips the polar night to the first sunrise in January (Tromsø)', () => {
    const next = nextSunEvent('sunrise', 0, Date.parse('2026-12-21T12:00:00+01:00'), tromso);
    const day = localDate(next, tromso.timezone)!;
    expect(day.slice(0, 7)).toBe('2027-01');
    expect(sunEventOn('sunrise', next!, tromso)).toBe(next);
    const dayBefore = Date.parse(`${day}T12:00:00+01:00`) - 24 * HOUR;
    expect(sunEventOn('sunrise', dayBefore, tromso)).toBeUndefined();
    expect(nextSunEvent('sunrise', 0, dayBefore, tromso)).toBe(next);
  });

  it('is undefined where the event does not happen within 400 days', () => {
    const pole: HomeLocation = { latitude: 90, longitude: 0, timezone: 'UTC' };
    expect(nextSunEvent('sunrise', 0, Date.parse('2026-01-01T00:00:00Z'), pole)).toBeUndefined();
  });
});

describe('previousSunEvent', () => {
  const sunset21 = sunEventOn('sunset', Date.parse('2012-06-21T12:00:00-07:00'), sanFrancisco)!;
  const sunset20 = sunEventOn('sunset', Date.parse('2012-06-20T12:00:00-07:00'), sanFrancisco)!;

  it('gives the latest moment at or before the instant, with the offset', () => {
    expect(previousSunEvent('sunset', 0, sunset21, sanFrancisco)).toBe(sunset21);
    expect(previousSunEvent('sunset', 0, sunset21 - 1, sanFrancisco)).toBe(sunset20);
    expect(previousSunEvent('sunset', 30 * MINUTE, sunset21 + 20 * MINUTE, sanFrancisco)).toBe(sunset20 + 30 * MINUTE);
    expect(previousSunEvent('sunset', -30 * MINUTE, sunset21 - 20 * MINUTE, sanFrancisco)).toBe(sunset21 - 30 * MINUTE);
  });

  it('reaches back over the polar night to the last sunset before it (Tromsø)', () => {
    const previous = previousSunEvent('sunset', 0, Date.parse('2026-12-21T12:00:00+01:00'), tromso);
    expect(localDate(previous, tromso.timezone)?.slice(0, 7)).toBe('2026-11');
    expect(sunEventOn('sunset', previous! + 24 * HOUR, tromso)).toBeUndefined();
  });
});

describe('sunWindowHolds', () => {
  const day = '2012-06-21';
  const at = (hhmm: string) => Date.parse(`${day}T${hhmm}:00-07:00`);
  const sunrise = sunEventOn('sunrise', at('12:00'), sanFrancisco)!;
  const sunset = sunEventOn('sunset', at('12:00'), sanFrancisco)!;
  const night = { after: { event: 'sunset' as const }, before: { event: 'sunrise' as const } };

  it('holds across midnight for "after sunset, before sunrise"', () => {
    expect(sunWindowHolds(at('23:00'), sanFrancisco, night)).toBe(true);
    expect(sunWindowHolds(at('03:00'), sanFrancisco, night)).toBe(true);
    expect(sunWindowHolds(sunset, sanFrancisco, night)).toBe(true);
    expect(sunWindowHolds(sunset - 1, sanFrancisco, night)).toBe(false);
    expect(sunWindowHolds(sunrise, sanFrancisco, night)).toBe(false);
    expect(sunWindowHolds(sunrise - 1, sanFrancisco, night)).toBe(true);
    expect(sunWindowHolds(at('12:00'), sanFrancisco, night)).toBe(false);
  });

  it('holds within the day for "after sunrise, before sunset", and with one bound or offsets', () => {
    const daylight = { after: { event: 'sunrise' as const }, before: { event: 'sunset' as const } };
    expect(sunWindowHolds(at('12:00'), sanFrancisco, daylight)).toBe(true);
    expect(sunWindowHolds(at('23:00'), sanFrancisco, daylight)).toBe(false);
    expect(sunWindowHolds(at('03:00'), sanFrancisco, daylight)).toBe(false);
    expect(sunWindowHolds(at('21:00'), sanFrancisco, { after: { event: 'sunset' } })).toBe(true);
    expect(sunWindowHolds(at('03:00'), sanFrancisco, { after: { event: 'sunset' } })).toBe(false);
    expect(sunWindowHolds(at('03:00'), sanFrancisco, { before: { event: 'sunrise' } })).toBe(true);
    expect(sunWindowHolds(sunset + 30 * MINUTE, sanFrancisco, { after: { event: 'sunset', offsetMs: HOUR } })).toBe(false);
    expect(sunWindowHolds(sunset - 30 * MINUTE, sanFrancisco, { after: { event: 'sunset', offsetMs: -HOUR } })).toBe(true);
  });

  it('makes a missing event its part false (polar night), while twilight windows still work', () => {
    const polarDay = (hhmm: string) => Date.parse(`2026-12-21T${hhmm}:00+01:00`);
    expect(sunWindowHolds(polarDay('23:00'), tromso, night)).toBe(false);
    expect(sunWindowHolds(polarDay('23:00'), tromso, { after: { event: 'sunset' } })).toBe(false);
    expect(sunWindowHolds(polarDay('12:00'), tromso, { before: { event: 'sunrise' } })).toBe(false);
    const dark = { after: { event: 'dusk' as const }, before: { event: 'dawn' as const } };
    expect(sunWindowHolds(polarDay('23:00'), tromso, dark)).toBe(true);
    expect(sunWindowHolds(polarDay('06:00'), tromso, dark)).toBe(true);
    expect(sunWindowHolds(polarDay('12:00'), tromso, dark)).toBe(false);
  });
});
