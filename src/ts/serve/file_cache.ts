// What serveStatic remembers of the files it served: per file, its metadata and ready-made
// response headers, and for small files their bytes. An entry is used only while a stat of the
// path (one confined openat2 + fstat per request) still finds the same file (mode, size, mtime,
// ctime, inode, device); its bytes are kept only for files whose ctime was old enough when they
// were read (settledAfterMs), so that a change within the filesystem's timestamp granularity
// cannot leave stale bytes behind an unchanged stat.
import type { Coding } from './http_rules';

/** The fields of statBeneath's result an entry is validated against, in its order. */
export const enum StatField { Mode = 0, Size = 1, MtimeMs = 2, Ino = 3, Dev = 4, CtimeMs = 5 }

/**
 * How old (by ctime) a file must be for its bytes to be kept. Linux stamps file times from a
 * clock that ticks once per jiffy (1-10 ms) on most filesystems, and some filesystems keep
 * whole seconds (or two): a file written twice within one tick keeps its timestamps, so its
 * bytes are cached only once no later write can share a tick with the one the cache saw. A
 * ctime with a fraction of a second comes from a fine clock; one without may be whole seconds.
 */
export function settledAfterMs(ctimeMs: number): number {
  return ctimeMs % 1000 === 0 ? 2000 : 100;
}

/** A file (or a directory) beneath the root, as its stat found it. */
export class FileEntry {
  /** The bytes, for a small file the cache keeps; null otherwise. */
  body: Buffer | null = null;
  /** The read of the bytes in flight, which other requests for the file share. */
  reading: Promise<Buffer | 'changed'> | null = null;
  /** Used since the cache's clock hand last passed it. */
  referenced = false;
  /** What the response of this file sends, computed once (see StaticSite.headersFor). */
  headers: FileHeaders | null = null;
  /** When (performance.now()) a stat that asked the file's filesystem in full, not only the
   * kernel's held attributes, last began: made now, as every stat an entry is made from is.
   * -Infinity once a read found the file changed or gone: its next check asks in full. */
  statedAt = performance.now();

  /** `key`: the cache's name for it; `rel`: its path beneath the root; `stat`: the stat it was
   * made from (statBeneath's array, StatField's order), which a held check answers with;
   * `coding`: the content coding of a precompressed sibling (rel then ends with its suffix). */
  constructor(readonly key: string, readonly rel: string, readonly stat: Float64Array, readonly coding?: Coding) {}

  get mode(): number { return this.stat[StatField.Mode]; }
  get size(): number { return this.stat[StatField.Size]; }
  get mtimeMs(): number { return this.stat[StatField.MtimeMs]; }
  get ino(): number { return this.stat[StatField.Ino]; }
  get dev(): number { return this.stat[StatField.Dev]; }
  get ctimeMs(): number { return this.stat[StatField.CtimeMs]; }

  /** Whether `st` (a fresh stat of the same path) still describes this file. */
  matches(st: Float64Array): boolean {
    return st[StatField.CtimeMs] === this.ctimeMs && st[StatField.MtimeMs] === this.mtimeMs &&
      st[StatField.Size] === this.size && st[StatField.Ino] === this.ino &&
      st[StatField.Dev] === this.dev && st[StatField.Mode] === this.mode;
  }

  /** Whether an open descriptor's fs.Stats is this file, unchanged. */
  matchesStats(st: { mode: number; size: number; mtimeMs: number; ino: number; dev: number; ctimeMs: number }): boolean {
    return st.ctimeMs === this.ctimeMs && st.mtimeMs === this.mtimeMs && st.size === this.size &&
      st.ino === this.ino && st.dev === this.dev && st.mode === this.mode;
  }
}

/** The headers of one file's responses, as flat [name, value, ...] lists for writeHead. */
export interface FileHeaders {
  /** 200 with the whole file. */
  full: string[];
  /** What 206 shares with 200 (all but Content-Length). */
  partial: string[];
  /** 304: the validators and caching headers only. */
  notModified: string[];
  etag: string | undefined;
  lastModified: string | undefined;
}

export interface CacheLimits {
  /** Files up to this many bytes have their bytes kept. */
  maxFileSize: number;
  /** All kept bytes together. */
  maxBytes: number;
  /** Entries (with or without bytes). */
  maxEntries: number;
}

/**
 * Entries by key, evicted by the clock algorithm (an entry used since the hand last passed
 * gets a second chance), so that a hit costs one flag store rather than a reordering.
 */
export class FileCache {
  private readonly entries = new Map<string, FileEntry>();
  private bodyBytes = 0;

  constructor(readonly limits: CacheLimits) {}

  get(key: string): FileEntry | undefined {
    return this.entries.get(key);
  }

  get size(): number {
    return this.entries.size;
  }

  /** Bytes of file contents held. */
  get bytes(): number {
    return this.bodyBytes;
  }

  set(entry: FileEntry): void {
    const old = this.entries.get(entry.key);
    if (old !== undefined) this.delete(old);
    // Evictions free a tenth of the limit at once, so that their walk is paid rarely.
    if (this.entries.size >= this.limits.maxEntries) this.evict(() => this.entries.size < this.limits.maxEntries * 0.9);
    this.entries.set(entry.key, entry);
  }

  delete(entry: FileEntry): void {
    if (this.entries.get(entry.key) !== entry) return;
    this.entries.delete(entry.key);
    if (entry.body !== null) this.bodyBytes -= entry.body.length;
    entry.body = null;
  }

  /** Keeps a copy of `body` with `entry` when the limits allow; whether it did. */
  keepBody(entry: FileEntry, body: Buffer, now: number): boolean {
    if (body.length > this.limits.maxFileSize || body.length > this.limits.maxBytes) return false;
    if (now - entry.ctimeMs < settledAfterMs(entry.ctimeMs) || this.entries.get(entry.key) !== entry || entry.body !== null) return false;
    if (this.bodyBytes + body.length > this.limits.maxBytes) {
      this.evict(() => this.bodyBytes + body.length <= this.limits.maxBytes * 0.9);
      // The entry itself may have gone with the others.
      if (this.entries.get(entry.key) !== entry) return false;
    }
    // A copy of its own: a read's Buffer may be a view of a larger slab that it would pin.
    const copy = Buffer.allocUnsafeSlow(body.length);
    body.copy(copy);
    entry.body = copy;
    this.bodyBytes += copy.length;
    return true;
  }

  /** Removes entries from the oldest on, sparing each recently used one once, until `enough`. */
  private evict(enough: () => boolean): void {
    for (let passes = 0; passes < 2 && !enough(); passes++) {
      for (const entry of [...this.entries.values()]) {
        if (enough()) return;
        if (entry.referenced) {
          entry.referenced = false;
          this.entries.delete(entry.key);
          this.entries.set(entry.key, entry);
        } else {
          this.delete(entry);
        }
      }
    }
  }

  clear(): void {
    for (const entry of this.entries.values()) entry.body = null;
    this.entries.clear();
    this.bodyBytes = 0;
  }
}

/**
 * Names a lookup that waited (on the thread pool) found missing, each with its errno and when
 * that lookup began, oldest first. A server's mount may keep no negative entries in the dentry
 * cache (FUSE's negative_timeout is 0 by default), and there every request for a missing name
 * (a precompressed sibling, an extension tried, a 404) would ask the server again; within
 * `heldMs` of the lookup the name is taken as still missing instead. Asked only where the
 * dentry cache cannot answer at once: a name made meanwhile on a local filesystem is there.
 */
export class MissingNames {
  private readonly names = new Map<string, { errno: number; at: number }>();

  constructor(private readonly maxNames: number, private readonly heldMs: number) {}

  /** The errno `path` was missing with, while that is recent enough at `now`. */
  get(path: string, now: number): number | undefined {
    const missing = this.names.get(path);
    if (missing === undefined) return undefined;
    if (now - missing.at < this.heldMs) return missing.errno;
    this.names.delete(path);
    return undefined;
  }

  get size(): number {
    return this.names.size;
  }

  set(path: string, errno: number, at: number): void {
    this.names.delete(path);
    // A flood of names that are not there costs the oldest of them, never memory.
    if (this.names.size >= this.maxNames) this.names.delete(this.names.keys().next().value as string);
    this.names.set(path, { errno, at });
  }

  delete(path: string): void {
    this.names.delete(path);
  }

  clear(): void {
    this.names.clear();
  }
}
