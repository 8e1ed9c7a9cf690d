// The part of serveStatic that does not depend on the server: a request's method, URL and
// headers → what to answer (a file or a range of it, 304, a redirect, an error, or "not mine"),
// with paths resolved beneath the root by the kernel (openat2 RESOLVE_BENEATH) and what was
// learnt about files kept in a FileCache.
import * as fs from 'node:fs';
import { constants as osConstants } from 'node:os';
import * as nodePath from 'node:path';
import { promisify } from 'node:util';
import type { IncomingHttpHeaders } from 'node:http';
import { contentType } from 'mime-types';
import { Root, type ConfinedStats } from '../read/confine';
import { native } from '../engine/engine';
import { invalidArgType, invalidArgValue, withCode } from '../common/errors';
import { kReaderRoot, smartRead } from '../read/read_async';
import type { PathLike } from '../common/args';
import { FileCache, FileEntry, MissingNames, StatField, type FileHeaders } from './file_cache';
import { FileRangeStream } from './file_stream';
import { acceptedCodings, anyStrongMatch, httpDate, noneMatch, parseRange, rangeStillValid, redirectTarget, type Coding } from './http_rules';

/** serveStatic's options: the behaviour of serve-static and send, with their defaults. */
export interface ServeStaticOptions {
  /** Files tried for a URL that ends in `/`, in order (default `['index.html']`); false: none. */
  index?: string | string[] | false;
  /** A directory named without its trailing slash is redirected (301) to the name with it
   * (default true); with false it is not found. */
  redirect?: boolean;
  /** Names with a segment that starts with a dot: 'ignore' (default: not found), 'deny' (403) or
   * 'allow'. `.well-known` is always allowed (RFC 8615). */
  dotfiles?: 'ignore' | 'deny' | 'allow';
  /** ETag: 'strong' (default, `"size-mtime"`), 'weak' (`W/"size-mtime"`), or false for none.
   * true is 'strong'. */
  etag?: boolean | 'strong' | 'weak';
  /** Last-Modified (default true). */
  lastModified?: boolean;
  /** Range requests (default true): Accept-Ranges, 206, 416. */
  acceptRanges?: boolean;
  /** Cache-Control (default true): `public, max-age=<maxAge in s>[, immutable]`, or this string. */
  cacheControl?: boolean | string;
  /** Cache-Control max-age in milliseconds, as serve-static takes it (default 0; at most a year). */
  maxAge?: number;
  /** Adds `immutable` to Cache-Control (default false). */
  immutable?: boolean;
  /** Extensions tried for a name without one that is not found, e.g. ['html'] (default none). */
  extensions?: string[] | false;
  /** Precompressed siblings (`name.br`, `name.gz`) served to clients that accept them, with
   * Content-Encoding and `Vary: Accept-Encoding` (default false). true: both, brotli first. */
  precompressed?: boolean | Array<'br' | 'gzip'>;
  /** With a `next` (Express, Connect): what is not found, and methods other than GET and HEAD,
   * go to next() rather than an error response (default true), as serve-static does. */
  fallthrough?: boolean;
  /**
   * Called before a file's headers are sent, to set more (or other) headers.
   * @param res The response, headers not yet sent.
   * @param path The file's path beneath the root.
   * @param stats The file's stats.
   */
  setHeaders?: (res: import('node:http').ServerResponse, path: string, stats: ConfinedStats) => void;
  /** Refuse every symbolic link on the way (ELOOP), not only those that lead out of the root. */
  noSymlinks?: boolean;
  /** Files larger than this are streamed with positional reads (default 1 MiB); smaller ones are
   * read whole. */
  streamFrom?: number;
  /** Bytes per read of a streamed file (default 128 KiB; two reads are in flight at a time). */
  streamChunk?: number;
  /** What is kept of the files served (see the README): false keeps nothing. */
  cache?: false | {
    /** The largest file whose bytes are kept (default 256 KiB). */
    maxFileSize?: number;
    /** The bytes kept in all (default 64 MiB). */
    maxBytes?: number;
    /** The files whose stats and headers are kept (default 10,000); as many missing names
     * are kept, for a second, on a server's mount (see docs/serving.md). */
    maxEntries?: number;
  };
}

/** What to answer a request with. */
export type Decision =
  | { kind: 'file'; status: 200 | 206; entry: FileEntry; start: number; end: number; headers: string[] }
  | { kind: 'not-modified'; entry: FileEntry; headers: string[] }
  | { kind: 'redirect'; location: string }
  /** `fallThrough`: a 404 (or 405) that a framework's next route may answer instead. */
  | { kind: 'error'; status: number; fallThrough: boolean; headers?: string[]; cause?: Error };

const codingSuffix: Record<Coding, string> = { br: '.br', gzip: '.gz' };
// Reads a streamed file keeps in flight: the next chunk is on its way while one is sent.
const kStreamDepth = 2;
const fstat = promisify(fs.fstat);
const ERRNO = osConstants.errno;
const ONE_YEAR_MS = 365 * 24 * 3600 * 1000;
const S_IFMT = fs.constants.S_IFMT;
const S_IFREG = fs.constants.S_IFREG;
const S_IFDIR = fs.constants.S_IFDIR;
// How long after a stat that asked a server's mount (FUSE, NFS) for a file's attributes the
// attributes the kernel holds for it are taken without asking again: such a stat waits for the
// server once they lapse, and the event loop with it; a check past this is made off the loop.
// A change there is seen up to this much later, besides the kernel's own attribute cache
// (FUSE's attr_timeout, 1 s by default; NFS's acregmin, 3 s).
const kHeldAttributesMs = 1000;

/** A request's path, decoded, relative to the root; or the status that refuses it. */
type Target = { rel: string; pathname: string; search: string } | { status: number };

/**
 * A stat a decision needs: `path` looked up beneath the root, or, with `confirm` (the cached
 * entry it was), confirmed by one unconfined stat from the root.
 */
interface Lookup { path: string; confirm: FileEntry | undefined }
/** A lookup's answer: statBeneath's array, or the errno (positive). */
type Looked = Float64Array | number;
/** Decision code: yields each stat it needs and is resumed with the answer, so that one code
 * decides both at once (decide's loop) and across the answers of stats made off the loop
 * (decideLater). */
type Deciding<T> = Generator<Lookup, T, Looked>;

function validateOptions(o: ServeStaticOptions, caller: Function): void {
  const bool = (name: keyof ServeStaticOptions) => {
    if (o[name] !== undefined && typeof o[name] !== 'boolean') throw invalidArgType(`options.${name}`, 'of type boolean', o[name], caller);
  };
  for (const name of ['redirect', 'lastModified', 'acceptRanges', 'immutable', 'fallthrough', 'noSymlinks'] as const) bool(name);
  const positive = (name: string, value: unknown) => {
    if (value !== undefined && (typeof value !== 'number' || !(value > 0) || !Number.isSafeInteger(value))) {
      throw invalidArgValue(`options.${name}`, value, 'must be a positive integer', caller);
    }
  };
  positive('streamFrom', o.streamFrom);
  positive('streamChunk', o.streamChunk);
  if (o.maxAge !== undefined && (typeof o.maxAge !== 'number' || Number.isNaN(o.maxAge) || o.maxAge < 0)) {
    throw invalidArgValue('options.maxAge', o.maxAge, 'must be a number of milliseconds >= 0', caller);
  }
  if (o.dotfiles !== undefined && !['ignore', 'deny', 'allow'].includes(o.dotfiles)) {
    throw invalidArgValue('options.dotfiles', o.dotfiles, "must be 'ignore', 'deny' or 'allow'", caller);
  }
  if (o.etag !== undefined && typeof o.etag !== 'boolean' && o.etag !== 'strong' && o.etag !== 'weak') {
    throw invalidArgValue('options.etag', o.etag, "must be true, false, 'strong' or 'weak'", caller);
  }
  if (o.cacheControl !== undefined && typeof o.cacheControl !== 'boolean' && typeof o.cacheControl !== 'string') {
    throw invalidArgType('options.cacheControl', 'of type boolean or string', o.cacheControl, caller);
  }
  const names = (name: string, value: unknown) => {
    if (value === undefined || value === false) return;
    const list = typeof value === 'string' ? [value] : value;
    if (!Array.isArray(list) || list.some((n) => typeof n !== 'string' || n === '' || n.includes('/') || n.includes('\0'))) {
      throw invalidArgValue(`options.${name}`, value, 'must be a file name, an array of them, or false', caller);
    }
  };
  names('index', o.index);
  names('extensions', o.extensions);
  if (o.precompressed !== undefined && typeof o.precompressed !== 'boolean' &&
      (!Array.isArray(o.precompressed) || o.precompressed.some((c) => c !== 'br' && c !== 'gzip'))) {
    throw invalidArgValue('options.precompressed', o.precompressed, "must be a boolean or an array of 'br' and 'gzip'", caller);
  }
  if (o.setHeaders !== undefined && typeof o.setHeaders !== 'function') throw invalidArgType('options.setHeaders', 'of type function', o.setHeaders, caller);
  if (o.cache !== undefined && o.cache !== false && (o.cache === null || typeof o.cache !== 'object')) {
    throw invalidArgType('options.cache', 'of type object', o.cache, caller);
  }
  if (o.cache) {
    for (const key of ['maxFileSize', 'maxBytes', 'maxEntries'] as const) positive(`cache.${key}`, o.cache[key]);
  }
}

/** The files beneath one root and the rules they are served by. */
export class StaticSite {
  readonly root: Root;
  readonly rootPath: string;
  readonly cache: FileCache;
  /** Names a lookup off the loop found missing, taken as missing for a while (see MissingNames). */
  private readonly missing: MissingNames;
  /** The stats off the loop not yet answered, by what they ask (see lookLater). */
  private readonly statsMade = new Map<string, { looked: Promise<Looked>; start: number }>();
  readonly fallthrough: boolean;
  readonly setHeaders: ServeStaticOptions['setHeaders'];
  private readonly index: string[];
  private readonly extensions: string[];
  readonly redirect: boolean;
  private readonly dotfiles: 'ignore' | 'deny' | 'allow';
  private readonly etag: 'strong' | 'weak' | false;
  private readonly lastModified: boolean;
  readonly acceptRanges: boolean;
  private readonly cacheControl: string | undefined;
  private readonly codings: Coding[];
  readonly streamFrom: number;
  private readonly streamChunk: number;
  private readonly noSymlinks: boolean;

  constructor(root: PathLike, options: ServeStaticOptions | undefined, caller: Function) {
    if (options !== undefined && (options === null || typeof options !== 'object')) throw invalidArgType('options', 'of type object', options, caller);
    const o = options ?? {};
    validateOptions(o, caller);
    this.index = o.index === false ? [] : typeof o.index === 'string' ? [o.index] : o.index ?? ['index.html'];
    this.extensions = o.extensions === false || o.extensions === undefined ? [] : typeof o.extensions === 'string' ? [o.extensions] : o.extensions;
    this.redirect = o.redirect ?? true;
    this.dotfiles = o.dotfiles ?? 'ignore';
    this.etag = o.etag === false ? false : o.etag === 'weak' ? 'weak' : 'strong';
    this.lastModified = o.lastModified ?? true;
    this.acceptRanges = o.acceptRanges ?? true;
    if (o.cacheControl === false) this.cacheControl = undefined;
    else if (typeof o.cacheControl === 'string') this.cacheControl = o.cacheControl;
    else this.cacheControl = `public, max-age=${Math.floor(Math.min(o.maxAge ?? 0, ONE_YEAR_MS) / 1000)}${o.immutable ? ', immutable' : ''}`;
    this.codings = o.precompressed === true ? ['br', 'gzip'] : Array.isArray(o.precompressed) ? [...o.precompressed] : [];
    this.fallthrough = o.fallthrough ?? true;
    this.setHeaders = o.setHeaders;
    this.noSymlinks = o.noSymlinks ?? false;
    this.streamFrom = o.streamFrom ?? 1 << 20;
    this.streamChunk = o.streamChunk ?? 128 << 10;
    const cache = o.cache === false ? { maxFileSize: 1, maxBytes: 1, maxEntries: 1 } : o.cache ?? {};
    this.cache = new FileCache({
      maxFileSize: cache.maxFileSize ?? 256 << 10,
      maxBytes: cache.maxBytes ?? 64 << 20,
      maxEntries: cache.maxEntries ?? 10_000,
    });
    if (o.cache === false) this.cache.limits.maxFileSize = 0;
    this.missing = new MissingNames(this.cache.limits.maxEntries, kHeldAttributesMs);
    // Opened last, once the options are known to be good.
    this.root = new Root(root, o.noSymlinks, caller);
    this.rootPath = nodePath.resolve(this.root.path.toString());
  }

  /** The request's path relative to the root (its URL path, decoded, without leading slashes). */
  private target(url: string): Target {
    let pathname: string;
    let search = '';
    if (url.charCodeAt(0) === 47 /* / */) {
      const q = url.indexOf('?');
      pathname = q === -1 ? url : url.slice(0, q);
      if (q !== -1) search = url.slice(q);
    } else {
      // The absolute form (a request to a proxy); anything else is not a path.
      try {
        const parsed = new URL(url);
        if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return { status: 400 };
        pathname = parsed.pathname;
        search = parsed.search;
      } catch {
        return { status: 400 };
      }
    }
    let decoded = pathname;
    if (pathname.includes('%')) {
      try {
        decoded = decodeURIComponent(pathname);
      } catch {
        return { status: 400 };
      }
    }
    // A NUL cannot be in a file name: a name with one is a probe, refused as forbidden.
    if (decoded.includes('\0')) return { status: 403 };
    let start = 0;
    while (decoded.charCodeAt(start) === 47) start++;
    const rel = start === 0 ? decoded : decoded.slice(start);
    if (this.dotfiles !== 'allow' && hasDotSegment(rel)) return { status: this.dotfiles === 'deny' ? 403 : 404 };
    return { rel, pathname, search };
  }

  /**
   * The answer to `step` without waiting for a disk or a server, or null where it would wait:
   * a name not in the dentry cache, a file on a filesystem whose stat asks a server (FUSE, NFS).
   * Within kHeldAttributesMs of the stat that asked such a server, a name the pool found missing
   * is missing still, and a cached entry whose name the kernel no longer holds is taken as it
   * was (on a mount that keeps names for no time, every check would ask the server).
   */
  private lookNow(step: Lookup): Looked | null {
    const { dirfd, resolve } = this.root.confine;
    const { confirm } = step;
    if (confirm === undefined) {
      const raw = native!.statBeneathIfCached(step.path, dirfd, resolve);
      if (raw === null) return this.missing.get(step.path, performance.now()) ?? null;
      return raw instanceof Float64Array ? raw : Math.abs(raw.errno);
    }
    const held = performance.now() - confirm.statedAt < kHeldAttributesMs;
    const raw = native!.statAtNow(step.path, dirfd, confirm.dev, held);
    if (raw === null) return held ? confirm.stat : null;
    return raw instanceof Float64Array ? raw : Math.abs(raw.errno);
  }

  /**
   * The answer to `step` from a stat made off the loop (Root.statAsync). Requests that need the
   * same stat while it is made share it: a burst of clients asking for one file that is not
   * cached (after a start, or as a server's mount makes every lookup wait) asks the filesystem
   * once, not once each.
   */
  private lookLater(step: Lookup): Promise<Looked> {
    const { confirm } = step;
    const key = (confirm === undefined ? 'lookup\0' : 'check\0') + step.path;
    let stat = this.statsMade.get(key);
    if (stat === undefined) {
      const start = performance.now();
      const made = { looked: this.statOffLoop(step.path, confirm !== undefined, start), start };
      this.statsMade.set(key, made);
      const done = () => { this.statsMade.delete(key); };
      made.looked.then(done, done);
      stat = made;
    }
    if (confirm === undefined) return stat.looked;
    const { start } = stat;
    return stat.looked.then((looked) => {
      confirm.statedAt = start;
      return looked;
    });
  }

  /** A lookup of `path` beneath the root, or with `check` one stat from it, begun at `start`,
   * off the event loop's thread. */
  private async statOffLoop(path: string, check: boolean, start: number): Promise<Looked> {
    const raw = await this.root.statAsync(path, check);
    if (raw instanceof Float64Array) {
      if (!check) this.missing.delete(path);
      return raw;
    }
    const errno = Math.abs(raw.errno);
    if (!check && isNotFound(errno)) this.missing.set(path, errno, start);
    return errno;
  }

  /**
   * What to answer; the bytes are read by the caller. Decided at once (a stat or two) where
   * every stat it needs can be answered without waiting; otherwise a promise, the stats that
   * would wait (a cold disk's lookup, any stat on a FUSE or NFS mount) made off the loop
   * (Root.statAsync).
   */
  decide(method: string | undefined, url: string, headers: IncomingHttpHeaders): Decision | Promise<Decision> {
    const steps = this.deciding(method, url, headers);
    let next = steps.next();
    while (!next.done) {
      const looked = this.lookNow(next.value);
      if (looked === null) return this.decideLater(steps, next.value);
      next = steps.next(looked);
    }
    return next.value;
  }

  /** decide() from `step` on, which it found would wait; the root closed meanwhile is a 503. */
  private async decideLater(steps: Deciding<Decision>, step: Lookup): Promise<Decision> {
    let looked: Looked | null = null;
    for (;;) {
      const next = steps.next(looked ?? await this.lookLater(step));
      if (next.done) return next.value;
      step = next.value;
      if (this.root.isReleased) return { kind: 'error', status: 503, fallThrough: false };
      looked = this.lookNow(step);
    }
  }

  /**
   * The entry for `rel` (as `coding`'s sibling when given), or the errno of its lookup. A cached
   * entry is still the file while one fstatat of the path from the root finds the same inode,
   * unchanged (ctime): that check is not confined, but it only ever confirms a file that a
   * confined lookup found, whose bytes and headers are what is served; anything else is looked
   * up again beneath the root. With noSymlinks every request is looked up confined, since a link
   * put in the way would not change the file it leads to.
   */
  private *lookup(rel: string, coding?: Coding): Deciding<FileEntry | number> {
    const key = coding === undefined ? rel : `${rel}\0${coding}`;
    const path = coding === undefined ? rel : rel + codingSuffix[coding];
    const cached = this.cache.get(key);
    if (cached !== undefined && !this.noSymlinks) {
      const st = yield { path, confirm: cached };
      if (st instanceof Float64Array && cached.matches(st)) {
        cached.referenced = true;
        return cached;
      }
    }
    const st = yield { path, confirm: undefined };
    // Another request may have made the entry while this one's lookup waited: then both share it
    // (and the read of its bytes).
    const current = this.cache.get(key);
    if (typeof st === 'number') {
      if (current !== undefined) this.cache.delete(current);
      return st;
    }
    if (current !== undefined && current.matches(st)) {
      current.referenced = true;
      return current;
    }
    const entry = new FileEntry(key, path, st, coding);
    this.cache.set(entry);
    return entry;
  }

  private *deciding(method: string | undefined, url: string, headers: IncomingHttpHeaders): Deciding<Decision> {
    if (method !== 'GET' && method !== 'HEAD') {
      return { kind: 'error', status: 405, fallThrough: true, headers: ['allow', 'GET, HEAD'] };
    }
    if (this.root.isReleased) return { kind: 'error', status: 503, fallThrough: false };
    const target = this.target(url);
    if ('status' in target) return { kind: 'error', status: target.status, fallThrough: target.status === 404 };
    const { rel } = target;
    if (rel === '' || rel.charCodeAt(rel.length - 1) === 47) return yield* this.directoryIndex(rel, headers);
    const found = yield* this.lookup(rel);
    if (typeof found === 'number') {
      if (isNotFound(found)) return yield* this.withExtensions(rel, found, headers);
      return statError(found);
    }
    const type = found.mode & S_IFMT;
    if (type === S_IFREG) return yield* this.answer(found, headers);
    if (type === S_IFDIR) {
      if (!this.redirect) return { kind: 'error', status: 404, fallThrough: true };
      return { kind: 'redirect', location: redirectTarget(target.pathname + '/', target.search) };
    }
    return { kind: 'error', status: 404, fallThrough: true };
  }

  private *directoryIndex(rel: string, headers: IncomingHttpHeaders): Deciding<Decision> {
    if (this.index.length === 0) {
      // Listing a directory is not this server's business: forbidden, as send answers.
      const dir = yield { path: rel === '' ? '.' : rel, confirm: undefined };
      if (typeof dir === 'number') return statError(dir);
      return { kind: 'error', status: (dir[StatField.Mode] & S_IFMT) === S_IFDIR ? 403 : 404, fallThrough: true };
    }
    let lastError = ERRNO.ENOENT;
    for (const name of this.index) {
      const found = yield* this.lookup(rel + name);
      if (typeof found === 'number') {
        lastError = found;
        if (isNotFound(found)) continue;
        return statError(found);
      }
      if ((found.mode & S_IFMT) === S_IFREG) return yield* this.answer(found, headers);
    }
    return statError(lastError);
  }

  private *withExtensions(rel: string, errno: number, headers: IncomingHttpHeaders): Deciding<Decision> {
    const base = rel.slice(rel.lastIndexOf('/') + 1);
    if (this.extensions.length > 0 && !base.includes('.')) {
      for (const ext of this.extensions) {
        const found = yield* this.lookup(`${rel}.${ext}`);
        if (typeof found !== 'number' && (found.mode & S_IFMT) === S_IFREG) return yield* this.answer(found, headers);
      }
    }
    return statError(errno);
  }

  /**
   * The answer for a regular file: its precompressed sibling when the client accepts one, then
   * the preconditions (412, 304), then the range (206, 416).
   */
  private *answer(entry: FileEntry, headers: IncomingHttpHeaders): Deciding<Decision> {
    const acceptEncoding = headers['accept-encoding'];
    if (this.codings.length > 0 && acceptEncoding !== undefined) {
      for (const coding of acceptedCodings(acceptEncoding, this.codings)) {
        const sibling = yield* this.lookup(entry.rel, coding);
        if (typeof sibling !== 'number' && (sibling.mode & S_IFMT) === S_IFREG) {
          entry = sibling;
          break;
        }
      }
    }
    const h = entry.headers ?? this.headersFor(entry);
    // Preconditions, in RFC 9110 13.2.2's order.
    const ifMatch = headers['if-match'];
    if (ifMatch !== undefined) {
      if (!anyStrongMatch(ifMatch, h.etag)) return { kind: 'error', status: 412, fallThrough: false };
    } else {
      const since = httpDate(headers['if-unmodified-since']);
      if (!Number.isNaN(since) && (h.lastModified === undefined || Math.floor(entry.mtimeMs / 1000) * 1000 > since)) {
        return { kind: 'error', status: 412, fallThrough: false };
      }
    }
    const ifNoneMatch = headers['if-none-match'];
    if (ifNoneMatch !== undefined) {
      if (h.etag !== undefined && noneMatch(ifNoneMatch, h.etag)) return { kind: 'not-modified', entry, headers: h.notModified };
    } else if (h.lastModified !== undefined) {
      const since = httpDate(headers['if-modified-since']);
      if (!Number.isNaN(since) && Math.floor(entry.mtimeMs / 1000) * 1000 <= since) {
        return { kind: 'not-modified', entry, headers: h.notModified };
      }
    }
    const range = headers.range;
    if (range !== undefined && this.acceptRanges) {
      const ifRange = headers['if-range'] as string | undefined;
      if (ifRange === undefined || rangeStillValid(ifRange, h.etag, h.lastModified)) {
        const wanted = parseRange(range, entry.size);
        if (wanted === 'unsatisfiable') {
          return { kind: 'error', status: 416, fallThrough: false, headers: ['content-range', `bytes */${entry.size}`] };
        }
        if (wanted !== null) {
          return {
            kind: 'file', status: 206, entry, start: wanted.start, end: wanted.end,
            headers: [...h.partial, 'content-range', `bytes ${wanted.start}-${wanted.end}/${entry.size}`, 'content-length', String(wanted.end - wanted.start + 1)],
          };
        }
      }
    }
    return { kind: 'file', status: 200, entry, start: 0, end: entry.size - 1, headers: h.full };
  }

  /** The headers every response of `entry` sends, computed once per entry. */
  private headersFor(entry: FileEntry): FileHeaders {
    const { coding } = entry;
    const named = coding === undefined ? entry.rel : entry.rel.slice(0, -codingSuffix[coding].length);
    const etagValue = this.etag === false ? undefined
      : `${this.etag === 'weak' ? 'W/' : ''}"${entry.size.toString(16)}-${Math.round(entry.mtimeMs * 1000).toString(16)}"`;
    const lastModified = this.lastModified ? new Date(entry.mtimeMs).toUTCString() : undefined;
    const validators: string[] = [];
    if (etagValue !== undefined) validators.push('etag', etagValue);
    if (lastModified !== undefined) validators.push('last-modified', lastModified);
    if (this.cacheControl !== undefined) validators.push('cache-control', this.cacheControl);
    if (this.codings.length > 0) validators.push('vary', 'Accept-Encoding');
    const partial = [
      'content-type', contentType(nodePath.extname(named)) || 'application/octet-stream',
      ...validators,
    ];
    if (coding !== undefined) partial.push('content-encoding', coding);
    if (this.acceptRanges) partial.push('accept-ranges', 'bytes');
    // A 304 carries what a cache needs to update its copy (RFC 9110 15.4.5): the ETag,
    // Cache-Control and Vary; Last-Modified only when there is no ETag.
    const notModified = etagValue === undefined ? validators : validators.filter((_, i) => validators[i - (i % 2)] !== 'last-modified');
    const headers: FileHeaders = {
      full: [...partial, 'content-length', String(entry.size)],
      partial,
      notModified,
      etag: etagValue,
      lastModified,
    };
    entry.headers = headers;
    return headers;
  }

  /** The file's bytes read whole, or 'changed' when the file is no longer the entry's (the
   * caller decides again). Requests for an entry whose bytes are being read share that read. */
  readWhole(entry: FileEntry): Promise<Buffer | 'changed'> {
    if (entry.reading !== null) return entry.reading;
    const reading = this.readWholeNow(entry);
    entry.reading = reading;
    const done = () => {
      if (entry.reading === reading) entry.reading = null;
    };
    reading.then(done, done);
    return reading;
  }

  private async readWholeNow(entry: FileEntry): Promise<Buffer | 'changed'> {
    let body: Buffer;
    try {
      body = await smartRead(entry.rel, { [kReaderRoot]: this.root } as object) as Buffer;
    } catch {
      return changed(entry);
    }
    if (body.length !== entry.size) return changed(entry);
    this.cache.keepBody(entry, body, Date.now());
    return body;
  }

  /** A stream of the file's bytes [start, end] from a descriptor of its own, or 'changed'.
   * Where the open would wait for a server (FUSE, NFS), opened off the loop (Root.openAsync),
   * its fstat and close made on the thread pool, so that the event loop never waits for them;
   * here, at once, elsewhere. */
  async openStream(entry: FileEntry, start: number, end: number): Promise<FileRangeStream | 'changed'> {
    const waits = this.root.opensWait(entry.rel);
    let fd: number;
    try {
      fd = waits ? await this.root.openAsync(entry.rel, this.openStream) : this.root.openSync(entry.rel, this.openStream);
    } catch {
      return changed(entry);
    }
    let same = false;
    try {
      same = entry.matchesStats(waits ? await fstat(fd) : fs.fstatSync(fd));
    } finally {
      // On FUSE a close sends the daemon a FLUSH: off the loop there too.
      if (!same && waits) fs.close(fd, () => {});
      else if (!same) fs.closeSync(fd);
    }
    if (!same) return changed(entry);
    return new FileRangeStream(fd, start, end, this.streamChunk, kStreamDepth, entry.rel, waits);
  }

  /** The absolute path of `entry` and what setHeaders is told of it. */
  describe(entry: FileEntry): [string, ConfinedStats] {
    const type = entry.mode & S_IFMT;
    return [nodePath.join(this.rootPath, entry.rel), {
      mode: entry.mode, size: entry.size, mtimeMs: entry.mtimeMs, ino: entry.ino, dev: entry.dev, ctimeMs: entry.ctimeMs,
      isFile: () => type === S_IFREG,
      isDirectory: () => type === S_IFDIR,
    }];
  }

  close(): void {
    if (this.root.isReleased) return;
    this.cache.clear();
    this.missing.clear();
    this.root.release();
  }
}

/** A read found `entry`'s file changed or gone: its next check asks the filesystem in full,
 * not the attributes held for it (the caller decides again). */
function changed(entry: FileEntry): 'changed' {
  entry.statedAt = -Infinity;
  return 'changed';
}

function hasDotSegment(rel: string): boolean {
  if (rel.charCodeAt(0) !== 46 /* . */ && !rel.includes('/.')) return false;
  for (const segment of rel.split('/')) {
    if (segment.length > 1 && segment.charCodeAt(0) === 46 && segment !== '..' && segment !== '.well-known') return true;
  }
  return false;
}

function isNotFound(errno: number): boolean {
  return errno === ERRNO.ENOENT || errno === ERRNO.ENOTDIR || errno === ERRNO.ENAMETOOLONG;
}

/** A failed lookup as a status: not found; outside the root, a refused link or no permission
 * (forbidden); anything else is the server's error. */
function statError(errno: number): Decision {
  if (isNotFound(errno)) return { kind: 'error', status: 404, fallThrough: true };
  const cause = withCode(new Error(`lookup failed: ${errnoName(errno)}`), errnoName(errno), statError);
  if (errno === ERRNO.EXDEV || errno === ERRNO.ELOOP || errno === ERRNO.EACCES || errno === ERRNO.EPERM) {
    return { kind: 'error', status: 403, fallThrough: false, cause };
  }
  return { kind: 'error', status: 500, fallThrough: false, cause };
}

function errnoName(errno: number): string {
  for (const [name, value] of Object.entries(ERRNO)) if (value === errno) return name;
  return `errno ${errno}`;
}
