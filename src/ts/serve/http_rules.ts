// The HTTP rules a static file server follows, as pure functions: byte ranges (RFC 9110 14),
// preconditions (RFC 9110 13), content codings from Accept-Encoding, and redirect targets.

/** A byte range [start, end], both inclusive, as Content-Range writes it. */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * A Range header against a representation of `size` bytes: one range to send (overlapping or
 * adjacent ranges are combined into it), 'unsatisfiable' (416) when no range overlaps the
 * representation, or null when the whole representation is sent instead (another unit, a
 * malformed header, or several ranges that do not combine into one).
 */
export function parseRange(header: string, size: number): ByteRange | 'unsatisfiable' | null {
  const eq = header.indexOf('=');
  if (eq === -1 || header.slice(0, eq).trim().toLowerCase() !== 'bytes') return null;
  const ranges: ByteRange[] = [];
  let valid = 0;
  for (const part of header.slice(eq + 1).split(',')) {
    const m = /^\s*(\d*)\s*-\s*(\d*)\s*$/.exec(part);
    if (!m || (m[1] === '' && m[2] === '')) return null;
    let start: number;
    let end: number;
    if (m[1] === '') {
      // A suffix: the last n bytes.
      const n = Number(m[2]);
      start = Math.max(0, size - n);
      end = size - 1;
      if (n === 0) {
        valid++;
        continue;
      }
    } else {
      start = Number(m[1]);
      end = size - 1;
      if (m[2] !== '') {
        const last = Number(m[2]);
        // last < first is not a range (RFC 9110 14.1.1): the header is ignored.
        if (last < start) return null;
        end = Math.min(last, end);
      }
    }
    valid++;
    if (start < size && start <= end) ranges.push({ start, end });
  }
  if (valid === 0) return null;
  if (ranges.length === 0) return 'unsatisfiable';
  ranges.sort((a, b) => a.start - b.start);
  const combined = ranges[0];
  for (let i = 1; i < ranges.length; i++) {
    if (ranges[i].start > combined.end + 1) return null;
    combined.end = Math.max(combined.end, ranges[i].end);
  }
  return combined;
}

/** The entity tags of an If-Match / If-None-Match list, as written (W/ kept). */
function entityTags(list: string): string[] {
  return list.split(',').map((t) => t.trim()).filter((t) => t !== '');
}

const opaque = (tag: string) => (tag.startsWith('W/') ? tag.slice(2) : tag);

/** Weak comparison (If-None-Match): the opaque tags are equal, weak or not. */
export function noneMatch(header: string, etag: string): boolean {
  if (header === etag) return true;
  const trimmed = header.trim();
  if (trimmed === '*') return true;
  const mine = opaque(etag);
  return entityTags(trimmed).some((t) => opaque(t) === mine);
}

/** Strong comparison (If-Match, If-Range): both tags strong and equal. */
function strongMatch(tag: string, etag: string): boolean {
  return !tag.startsWith('W/') && !etag.startsWith('W/') && tag === etag;
}

export function anyStrongMatch(header: string, etag: string | undefined): boolean {
  if (header.trim() === '*') return true;
  return etag !== undefined && entityTags(header).some((t) => strongMatch(t, etag));
}

/** An HTTP-date in milliseconds, or NaN when the header is not one. */
export function httpDate(value: string | undefined): number {
  return value === undefined ? NaN : Date.parse(value);
}

/**
 * If-Range: a strong entity tag that matches, or a date equal to Last-Modified (a validator the
 * client took from this representation), lets the range be served; anything else gets the whole
 * representation.
 */
export function rangeStillValid(ifRange: string, etag: string | undefined, lastModified: string | undefined): boolean {
  const value = ifRange.trim();
  if (value.startsWith('"') || value.startsWith('W/"')) return etag !== undefined && strongMatch(value, etag);
  return lastModified !== undefined && httpDate(value) === httpDate(lastModified);
}

export type Coding = 'br' | 'gzip';

/**
 * The codings of `offered` (in the server's order of preference) that an Accept-Encoding header
 * allows: named with a non-zero q, or covered by `*`.
 */
export function acceptedCodings(header: string, offered: readonly Coding[]): Coding[] {
  const q = new Map<string, number>();
  for (const part of header.split(',')) {
    const [name, ...params] = part.split(';');
    const coding = name.trim().toLowerCase();
    if (coding === '') continue;
    let weight = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([0-9.]+)\s*$/i.exec(p);
      if (m) weight = Number(m[1]);
    }
    q.set(coding, weight);
  }
  const star = q.get('*');
  return offered.filter((c) => {
    const weight = q.get(c) ?? star;
    return weight !== undefined && weight > 0;
  });
}

/**
 * A Location for `pathname` (as the client sent it, percent-encoded): one leading slash, so that
 * `//host` cannot become a protocol-relative URL, and anything a header cannot carry encoded.
 */
export function redirectTarget(pathname: string, search: string): string {
  const path = '/' + pathname.replace(/^\/+/, '');
  const encode = (s: string) => s.replace(/%(?![0-9A-Fa-f]{2})|[^\x21-\x7e]/g, (c) => {
    const code = c.charCodeAt(0);
    // Node reads the request line as latin1: a code below 256 is the byte the client sent.
    return code < 256 ? '%' + code.toString(16).toUpperCase().padStart(2, '0') : encodeURIComponent(c);
  });
  return encode(path) + encode(search);
}
